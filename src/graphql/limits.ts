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
import { parameterSchema, type OperationId } from '../rest/generatedContract';

/**
 * Limits on what one operation may ask, checked before anything runs (HTTP and WebSocket alike):
 * - depth: at most MAX_DEPTH nested fields (introspection fields are not counted, so GraphiQL works);
 * - `first`: within the bounds of the REST `limit` of the same list (PAGINATED_FIELDS);
 * - cost: each field costs 1 (or its FIELD_COSTS), and the fields under a list cost once per item it may
 *   hold (`first`, or the list's own bound below); an operation above MAX_COST is refused. A query that
 *   asks 100 intents with their refunds and events is well under it, and so is a full page of 500
 *   intents with every field REST returns (~12 000); 100 aliased copies of either are not.
 * Every refusal is 400 `invalid_request` with a message that says which limit and by how much.
 */
export const MAX_DEPTH = 8;
export const MAX_COST = 20_000;

/**
 * The paginated fields and the REST list operation each mirrors: `first` takes the minimum, maximum
 * and default of that operation's `limit` in openapi.yaml (1 to 500 intents, 1 to 100 events and log
 * entries), so a page holds as much over GraphQL as over REST. schema.graphql repeats the defaults
 * (`first: Int = 25`), which test/graphql/limits.test.ts holds to these.
 */
export const PAGINATED_FIELDS: Readonly<Record<string, OperationId>> = {
  'Query.paymentIntents': 'listPaymentIntents',
  'Query.events': 'listEvents',
  'Query.logs': 'listLogs',
};

/**
 * Fields that cost more than reading a stored value. `PaymentLink.qrSvg` renders a QR code (~1 ms of CPU
 * each, where a field costs microseconds): at 100, one operation renders at most ~200, and the 100
 * links of `paymentLinks` with their QR codes fit once (100 × 101 + 1).
 */
const FIELD_COSTS: Record<string, number> = {
  'PaymentLink.qrSvg': 100,
};

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

export interface PageBounds {
  min: number;
  max: number;
  default: number;
}

const pageBoundsCache = new Map<string, PageBounds>();

/** The bounds of `first` on a paginated field (`Query.paymentIntents`): its REST operation's `limit`. */
export function pageBounds(coordinate: string): PageBounds {
  let bounds = pageBoundsCache.get(coordinate);
  if (!bounds) {
    const operationId = PAGINATED_FIELDS[coordinate];
    if (!operationId) throw new Error(`graphql: ${coordinate} takes 'first' but mirrors no REST list (add it to PAGINATED_FIELDS)`);
    const schema = parameterSchema(operationId, 'query', 'limit');
    const { minimum, maximum } = schema;
    if (typeof minimum !== 'number' || typeof maximum !== 'number' || typeof schema.default !== 'number') {
      throw new Error(`openapi.yaml: the 'limit' of ${operationId} needs a minimum, a maximum and a default`);
    }
    bounds = { min: minimum, max: maximum, default: schema.default };
    pageBoundsCache.set(coordinate, bounds);
  }
  return bounds;
}

/** Checks `first` of a paginated field against its bounds (omitted or null: the default). Resolvers call it too. */
export function pageSize(coordinate: string, first: number | null | undefined): number {
  const { min, max, default: fallback } = pageBounds(coordinate);
  const n = first ?? fallback;
  if (!Number.isInteger(n) || n < min || n > max) {
    const fieldName = coordinate.slice(coordinate.indexOf('.') + 1);
    throw ApiError.invalid(`Invalid argument 'first' of '${fieldName}': must be an integer from ${min} to ${max}, got ${n}`);
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
      cost += FIELD_COSTS[`${parent.name}.${name}`] ?? 1;
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
  return pageSize(coordinate, value === undefined || value === null ? undefined : typeof value === 'number' ? value : NaN);
}

function literal(node: ValueNode, variables: Record<string, unknown>): unknown {
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  if (node.kind === Kind.INT) return Number(node.value);
  if (node.kind === Kind.NULL) return null;
  return NaN;
}
