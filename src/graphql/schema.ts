import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  buildSchema,
  GraphQLScalarType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  type GraphQLTypeResolver,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from './graphqljs';
import { ROOT } from '../paths';
import { resolvers } from './resolvers';

const SCHEMA_FILE = path.join(ROOT, 'schema.graphql');

type FieldResolver = GraphQLFieldResolver<unknown, unknown>;
type SubscriptionField = { subscribe: FieldResolver; resolve?: FieldResolver };

/**
 * schema.graphql (the contract) plus the resolvers. Attaching them is a few assignments on the built
 * schema: a field gets its function (or `subscribe` + `resolve`), a custom scalar its conversions. A
 * resolver for a type or field the schema does not have is a start-up error, so the two cannot drift.
 */
export function buildExecutableSchema(): GraphQLSchema {
  const schema = buildSchema(readFileSync(SCHEMA_FILE, 'utf8'));
  for (const [typeName, typeResolvers] of Object.entries(resolvers as Record<string, unknown>)) {
    const type = schema.getType(typeName);
    if (!type) throw new Error(`graphql: resolvers for unknown type ${typeName}`);
    if (isScalarType(type)) {
      if (!(typeResolvers instanceof GraphQLScalarType)) throw new Error(`graphql: scalar ${typeName} needs a GraphQLScalarType`);
      type.serialize = typeResolvers.serialize;
      type.parseValue = typeResolvers.parseValue;
      type.parseLiteral = typeResolvers.parseLiteral;
      continue;
    }
    if (isInterfaceType(type)) {
      // An interface gets the one function that names an object's concrete type (`Node`: by its id's prefix).
      const { __resolveType, ...rest } = typeResolvers as { __resolveType?: unknown };
      if (typeof __resolveType !== 'function' || Object.keys(rest).length > 0) throw new Error(`graphql: interface ${typeName} takes __resolveType only`);
      type.resolveType = __resolveType as GraphQLTypeResolver<unknown, unknown>;
      continue;
    }
    if (!isObjectType(type)) throw new Error(`graphql: cannot attach resolvers to ${typeName}`);
    const fields = type.getFields();
    for (const [fieldName, resolver] of Object.entries(typeResolvers as Record<string, unknown>)) {
      const field = fields[fieldName];
      if (!field) throw new Error(`graphql: resolver for unknown field ${typeName}.${fieldName}`);
      if (typeof resolver === 'function') {
        field.resolve = resolver as FieldResolver;
      } else if (resolver && typeof resolver === 'object' && 'subscribe' in resolver) {
        field.subscribe = (resolver as SubscriptionField).subscribe;
        field.resolve = (resolver as SubscriptionField).resolve;
      } else {
        throw new Error(`graphql: resolver ${typeName}.${fieldName} must be a function or { subscribe, resolve }`);
      }
    }
  }
  return schema;
}
