import {
  getNamedType,
  isCompositeType,
  isObjectType,
  isInterfaceType,
  Kind,
  type DocumentNode,
  type ArgumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from './graphqljs';
import { ApiError } from '../errors';

/**
 * Limits on what one operation may ask, checked before anything runs (HTTP and WebSocket alike):
 * - depth: at most MAX_DEPTH nested fields (introspection fields are not counted, so GraphiQL works);
 * - `first`: 1 to MAX_PAGE on every paginated field;
 * - cost: each field costs 1, and the fields under a list cost once per item it may hold (`first`, or
 *   the list's own bound below); an operation above MAX_COST is refused. A query that asks 100 intents
 *   with their refunds and events is well under it; 100 aliased copies of it are not.
 * Every refusal is 400 `invalid_request` with a message that says which limit and by how much.
 */
export const MAX_DEPTH = 8;
export const MAX_PAGE = 100;
export const MAX_COST = 20_000;

/** Upper bounds (or typical sizes) of the lists that take no `first`. */
const LIST_SIZES: Record<string, number> = {
  'Query.paymentMethods': 10,
  'Query.paymentLinks': 100,
  'Query.webhookEndpoints': 20,
  'Query.apiKeys': 20,
  'WebhookEndpoint.deliveries': 50,
  'PaymentIntent.refunds': 5,
  'PaymentIntent.events': 10,
  'PaymentLink.methods': 1,
};

/** Checks `first` of a paginated field: 1 to MAX_PAGE. Resolvers call it too, for their default. */
export function pageSize(fieldName: string, first: number | null | undefined, fallback: number): number {
  const n = first ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE) {
    throw ApiError.invalid(`Invalid argument 'first' of '${fieldName}': must be an integer from 1 to ${MAX_PAGE}, got ${n}`);
  }
  return n;
}

interface Measure {
  depth: number;
  cost: number;
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  /** Fragments already measured (their result does not depend on where they are spread). */
  measured: Map<string, Measure>;
  variables: Record<string, unknown>;
}

export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): void {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  if (!operation) return; // graphql-js reports the missing operation itself
  const root = schema.getRootType(operation.operation);
  if (!root) return;
  const walk: Walk = {
    schema,
    fragments: new Map(
      document.definitions
        .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
        .map((f) => [f.name.value, f]),
    ),
    measured: new Map(),
    variables: variables ?? {},
  };
  const { depth, cost } = measure(walk, root, operation.selectionSet, new Set());
  if (depth > MAX_DEPTH) {
    throw ApiError.invalid(`Query too deep: ${depth} levels of nested fields, at most ${MAX_DEPTH} are allowed`);
  }
  if (cost > MAX_COST) {
    throw ApiError.invalid(
      `Query too expensive: estimated cost ${cost}, at most ${MAX_COST} is allowed. Ask for fewer items (first) or fewer fields.`,
    );
  }
}

/**
 * Depth (levels of fields below and including this set) and cost of a selection set. A fragment's result
 * is computed once and reused wherever it is spread, so the walk stays linear in the document's size even
 * when fragments spread each other many times over.
 */
function measure(walk: Walk, parent: GraphQLCompositeType, set: SelectionSetNode, visiting: Set<string>): Measure {
  let depth = 0;
  let cost = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      const name = sel.name.value;
      if (name.startsWith('__')) continue; // introspection: bounded by the schema itself
      cost += 1;
      const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
      const child = field ? getNamedType(field.type) : undefined;
      if (!field || !sel.selectionSet || !child || !isCompositeType(child)) {
        depth = Math.max(depth, 1);
        continue;
      }
      const inner = measure(walk, child, sel.selectionSet, visiting);
      depth = Math.max(depth, 1 + inner.depth);
      cost += inner.cost * multiplier(walk, `${parent.name}.${name}`, field, sel.arguments ?? []);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      const typeName = sel.typeCondition?.name.value;
      const type = typeName ? walk.schema.getType(typeName) : parent;
      const inner = measure(walk, type && isCompositeType(type) ? type : parent, sel.selectionSet, visiting);
      depth = Math.max(depth, inner.depth);
      cost += inner.cost;
    } else {
      const inner = measureFragment(walk, sel.name.value, parent, visiting);
      depth = Math.max(depth, inner.depth);
      cost += inner.cost;
    }
  }
  return { depth, cost };
}

function measureFragment(walk: Walk, name: string, parent: GraphQLCompositeType, visiting: Set<string>): Measure {
  const known = walk.measured.get(name);
  if (known) return known;
  const fragment = walk.fragments.get(name);
  // Unknown or cyclic: graphql-js validation refuses the document anyway.
  if (!fragment || visiting.has(name)) return { depth: 0, cost: 0 };
  const type = walk.schema.getType(fragment.typeCondition.name.value);
  visiting.add(name);
  const result = measure(walk, type && isCompositeType(type) ? type : parent, fragment.selectionSet, visiting);
  visiting.delete(name);
  walk.measured.set(name, result);
  return result;
}

function multiplier(walk: Walk, coordinate: string, field: GraphQLField<unknown, unknown>, args: readonly ArgumentNode[]): number {
  const firstArg = field.args.find((a) => a.name === 'first');
  if (!firstArg) return LIST_SIZES[coordinate] ?? 1;
  const given = args.find((a) => a.name.value === 'first');
  const value = given ? literal(given.value, walk.variables) : undefined;
  const fallback = typeof firstArg.defaultValue === 'number' ? firstArg.defaultValue : MAX_PAGE;
  return pageSize(field.name, value === undefined || value === null ? undefined : typeof value === 'number' ? value : NaN, fallback);
}

function literal(node: ValueNode, variables: Record<string, unknown>): unknown {
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  if (node.kind === Kind.INT) return Number(node.value);
  if (node.kind === Kind.NULL) return null;
  return NaN;
}
