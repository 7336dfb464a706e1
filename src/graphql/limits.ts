import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  visit,
  __Schema,
  __Type,
  type DocumentNode,
  type ArgumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLCompositeType,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from './graphqljs';
import { ApiError } from '../errors';
import { parameterSchema, type OperationId } from '../operations/contract';
import { LIST_BOUNDS, NESTED_PAGES, type PageBounds } from './listBounds';
import type { Admission } from '../operations/admit';
import { callerMayIntrospect, rememberRefusal, throwKnownRefusal } from './refusedDocuments';

export type { PageBounds } from './listBounds';

/**
 * Limits on what one operation may ask (depth, `first`, cost, introspection), checked before anything runs
 * and before graphql-js validates the document: validation costs more than this bounded walk, and a refusal
 * should cost less than what it refuses. The walk stops once past MAX_COST and measures a repeated selection
 * set once; a refusal says which limit and by how much. More: docs/decisions/notes/graphql.md, "Operation
 * limits".
 */
export const MAX_DEPTH = 8;
export const MAX_COST = 20_000;
/**
 * Fragments spread inside one another (`...A` in A spreads B, which spreads C ...), with or without
 * fields between: the walk follows them recursively, so their nesting is bounded like the brackets of
 * the text (parseQuery.ts, MAX_NESTING). No client nests a hundred; a text of 20,000 tokens could nest
 * 2,500, past what the stack holds (graphql-js's own validation overflows at some 5,000).
 */
export const MAX_FRAGMENT_NESTING = 100;
/** What re-entering a type already on the path multiplies (see above). */
export const REENTRY_FACTOR = 10;
/** `__schema` fields (aliases included) one operation may have: GraphiQL's introspection has one. */
export const MAX_SCHEMA_INTROSPECTIONS = 1;

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
  'WebhookEndpoint.pendingEvents': 'listPendingWebhookEvents',
  'Query.trustedDocuments': 'listGraphqlDocuments',
};

/**
 * Fields that cost more than reading a stored value. `PaymentLink.qrSvg` renders a QR code (~1 ms of CPU
 * each, where a field costs microseconds): at 100, one operation renders at most ~200, and the 100
 * links of `paymentLinks` with their QR codes fit once (100 × 101 + 1).
 */
const FIELD_COSTS: Record<string, number> = {
  'PaymentLink.qrSvg': 100,
};

// eslint-disable-next-line no-restricted-syntax -- a memo of openapi.yaml's list bounds, the same for every gateway
const pageBoundsCache = new Map<string, PageBounds>();

/**
 * The bounds of `first` on a paginated field: NESTED_PAGES for the lists of one payment, otherwise its
 * REST operation's `limit` (`Query.paymentIntents`).
 */
export function pageBounds(coordinate: string): PageBounds {
  const nested = NESTED_PAGES[coordinate];
  if (nested) return nested;
  let bounds = pageBoundsCache.get(coordinate);
  if (!bounds) {
    const operationId = PAGINATED_FIELDS[coordinate];
    if (!operationId) throw new Error(`graphql: ${coordinate} takes 'first' but has no bounds (add it to PAGINATED_FIELDS or NESTED_PAGES)`);
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


export interface LimitOptions {
  /** False for a publishable key: introspection is refused (403 permission_denied). */
  mayIntrospect: boolean;
}

interface Measure {
  depth: number;
  cost: number;
  /** `__schema` fields, and all introspection fields (`__schema`, `__type`). */
  schemas: number;
  introspections: number;
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  /**
   * Fragments already measured, by name and the set of types on the path (their result depends on
   * nothing else). `complete` false: the walk stopped inside it, over the budget it had then; its cost
   * is a lower bound, good for a refusal but measured again under a larger budget.
   */
  measured: Map<string, { measure: Measure; complete: boolean }>;
  variables: Record<string, unknown>;
  /** The operation's variable defaults (`query($n: Int = 100)`): what a variable left out is worth. */
  defaults: Map<string, ValueNode>;
  mayIntrospect: boolean;
  /** Selections and introspection steps visited: what the walk cost (limitWalkStats). */
  nodes: number;
  /** Introspection answers of this walk, by schema object and field (introspected). */
  introspected: Map<object, Map<string, unknown[]>>;
  /** False: walk every set again (tests compare the walk with and without the memo). */
  memo: boolean;
  /** Each selection set's memo id (one per distinct text), or null when it is not memoised (memoId). */
  setIds: Map<SelectionSetNode, number | null>;
  /** The memo ids by text. */
  textIds: Map<string, number>;
  /** Complete measures of selection sets, by memo id, parent type, level and the types on the path (measure). */
  sets: Map<string, Measure>;
  /** Complete introspection costs of selection sets, by schema object, then type and memo id (introspect). */
  introspections: Map<object, Map<string, number>>;
}

/** The walks so far and what the last one visited (tests hold the walk's bound by these, not by timing). */
const walkStats = { walks: 0, lastNodes: 0 };
export function limitWalkStats(): Readonly<typeof walkStats> {
  return { ...walkStats };
}

const NOTHING: Measure = { depth: 0, cost: 0, schemas: 0, introspections: 0 };
/** Costs are saturated here: far above any limit, and never Infinity or NaN in a message. */
const COST_CEILING = 1e12;

/**
 * Operations already measured within the limits, per schema and parsed document: Apollo hands every
 * request of the same query text the same DocumentNode, and what the walk finds depends only on it, the
 * operation, whether the caller may introspect, and the values of the variables it reads (those given as
 * `first` or `name`). Refusals are kept apart, by text (refusedDocuments.ts), and only those that read
 * no variable.
 */
// eslint-disable-next-line no-restricted-syntax -- a memo per schema and document under constant limits: the same answer on every gateway
const measuredOperations = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, DocumentLimits>>();
interface DocumentLimits {
  /** Variables given directly as a `first` or `name` argument somewhere in the document. */
  read: string[];
  passed: Map<string, { depth: number; cost: number }>;
}
/** Entries kept per document (one per operation name and value of `first`, say): a bound on what a client can make it hold. */
const MAX_MEASURED_PER_DOCUMENT = 64;

/**
 * Set on the context of a request whose operation passed the limits before Apollo (http.ts), so that
 * Apollo's hook (server.ts) does not measure it again. A property, not a WeakSet entry: Apollo hands its
 * hooks a shallow copy of the context, which keeps it (as executionLimits.ts's deadline).
 */
const CHECKED_AHEAD = Symbol('graphql operation limits checked');
interface CheckedAhead {
  [CHECKED_AHEAD]?: true;
}

/**
 * The limits of an admitted request's operation, over HTTP (http.ts) and WebSocket (ws.ts): after the
 * caller is authenticated and counted and the document parsed, before it is validated. A publishable
 * key, a client token and a caller without a key may not introspect.
 */
export function checkAdmittedOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  params: { operationName?: string | null; variables?: Record<string, unknown> | null },
  admission: Admission,
): void {
  checkOperationLimits(schema, document, params.operationName, params.variables, { mayIntrospect: callerMayIntrospect(admission) });
}

/** Marks a request's context as measured by checkAdmittedOperation (see limitsCheckedAhead). */
export function markLimitsChecked(context: object): void {
  (context as CheckedAhead)[CHECKED_AHEAD] = true;
}

/** Whether the request's operation was measured before Apollo; one that came another way (executeOperation) is not. */
export function limitsCheckedAhead(context: object): boolean {
  return (context as CheckedAhead)[CHECKED_AHEAD] === true;
}

/** Refuses an operation over the limits (ApiError); otherwise its depth and cost (null: no operation to measure). */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  options: LimitOptions = { mayIntrospect: true },
): { depth: number; cost: number } | null {
  let perSchema = measuredOperations.get(schema);
  if (!perSchema) measuredOperations.set(schema, (perSchema = new WeakMap()));
  let known = perSchema.get(document);
  if (!known) perSchema.set(document, (known = { read: variablesReadByLimits(document), passed: new Map() }));
  const vars = variables ?? {};
  const key = JSON.stringify([operationName ?? null, options.mayIntrospect, known.read.map((name) => (Object.hasOwn(vars, name) ? [vars[name] ?? null] : 0))]);
  const passed = known.passed.get(key);
  if (passed) return { ...passed };
  const text = document.loc?.source.body;
  const refusal = { operationName, mayIntrospect: options.mayIntrospect };
  if (text !== undefined && known.read.length === 0) throwKnownRefusal(text, refusal);
  let measured;
  try {
    measured = measureOperation(schema, document, operationName, variables, options);
  } catch (err) {
    // Remembered only when no variable's value went into it: then the text alone says it is refused.
    if (err instanceof ApiError && text !== undefined && known.read.length === 0) rememberRefusal(text, refusal, err);
    throw err;
  }
  if (measured && known.passed.size < MAX_MEASURED_PER_DOCUMENT) known.passed.set(key, { ...measured });
  return measured;
}

/** The variables the limits read (see argumentValue): those given directly as a `first` or `name` argument. */
function variablesReadByLimits(document: DocumentNode): string[] {
  const names = new Set<string>();
  visit(document, {
    Argument(node) {
      if ((node.name.value === 'first' || node.name.value === 'name') && node.value.kind === Kind.VARIABLE) names.add(node.value.name.value);
    },
  });
  return [...names].sort();
}

/**
 * Measures one operation and refuses it when over a limit, with no cache across calls (checkOperationLimits
 * keeps them). `memo` false walks every selection set again wherever it repeats: exported for the test that
 * holds the memo to the plain walk (costMemo.test.ts), not for use.
 */
export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  options: LimitOptions,
  memo = true,
): { depth: number; cost: number } | null {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  if (!operation) return null; // graphql-js reports the missing operation itself
  const root = schema.getRootType(operation.operation);
  if (!root) return null;
  const walk: Walk = {
    schema,
    fragments: new Map(
      document.definitions
        .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
        .map((f) => [f.name.value, f]),
    ),
    measured: new Map(),
    variables: variables ?? {},
    defaults: new Map(
      (operation.variableDefinitions ?? []).flatMap((v) => (v.defaultValue ? [[v.variable.name.value, v.defaultValue] as const] : [])),
    ),
    mayIntrospect: options.mayIntrospect,
    nodes: 0,
    introspected: new Map(),
    memo,
    setIds: new Map(),
    textIds: new Map(),
    sets: new Map(),
    introspections: new Map(),
  };
  // Depth and introspection are refused from the text alone, before any schema work (and in the order
  // they always were: depth first, then introspection, then the cost the walk finds).
  const shape = documentShape(walk, operation.selectionSet, 1, new Set(), new Map());
  if (shape.introspections > 0 && !options.mayIntrospect) throw introspectionRefused();
  if (shape.schemas > MAX_SCHEMA_INTROSPECTIONS) throw tooManySchemas(shape.schemas);
  walkStats.walks++;
  let result: Measure;
  try {
    result = measure(walk, root, operation.selectionSet, [root.name], 1, new Set(), MAX_COST);
  } finally {
    walkStats.lastNodes = walk.nodes;
  }
  const { depth, cost, schemas, introspections } = result;
  // Held during the walk already; checked again here on what it counted, whatever path it took.
  if (introspections > 0 && !options.mayIntrospect) throw introspectionRefused();
  if (schemas > MAX_SCHEMA_INTROSPECTIONS) throw tooManySchemas(schemas);
  if (depth > MAX_DEPTH) throw tooDeep();
  if (cost > MAX_COST) {
    throw ApiError.invalid(
      `Query too expensive: estimated cost at least ${cost}, at most ${MAX_COST} is allowed. Ask for fewer items (first) or fewer fields, and do not nest a type inside itself.`,
    );
  }
  return { depth, cost };
}

function introspectionRefused(): ApiError {
  return new ApiError('permission_denied', 'A publishable key cannot introspect the schema (__schema, __type); use a secret key');
}

function tooManySchemas(schemas: number): ApiError {
  return ApiError.invalid(`Too many introspections: ${schemas} __schema fields, at most ${MAX_SCHEMA_INTROSPECTIONS} per operation is allowed`);
}

interface Shape {
  /** Levels of fields below and including a set, introspection fields left out (as the walk counts them). */
  depth: number;
  schemas: number;
  introspections: number;
}

/**
 * What the operation's text alone says, before the walk: its depth (a field past MAX_DEPTH refuses it at
 * once), and its `__schema` and introspection fields, counted once per spread as the walk counts them.
 * A pass over the selections only, no schema work: a fragment is measured once and reused, so it is
 * linear in the document however often fragments are spread.
 */
function documentShape(walk: Walk, set: SelectionSetNode, level: number, visiting: Set<string>, shapes: Map<string, Shape>): Shape {
  const total: Shape = { depth: 0, schemas: 0, introspections: 0 };
  const add = (inner: Shape, depthOffset: number) => {
    total.depth = Math.max(total.depth, inner.depth + depthOffset);
    total.schemas += inner.schemas;
    total.introspections += inner.introspections;
  };
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      const name = sel.name.value;
      if (name === '__schema' || name === '__type') {
        add({ depth: 0, schemas: name === '__schema' ? 1 : 0, introspections: 1 }, 0);
        continue;
      }
      if (level > MAX_DEPTH) throw tooDeep();
      add(sel.selectionSet ? documentShape(walk, sel.selectionSet, level + 1, visiting, shapes) : NO_SHAPE, 1);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      add(documentShape(walk, sel.selectionSet, level, visiting, shapes), 0);
    } else {
      const name = sel.name.value;
      let inner = shapes.get(name);
      const fragment = walk.fragments.get(name);
      if (!inner && fragment && !visiting.has(name)) {
        enterFragment(visiting, name);
        inner = documentShape(walk, fragment.selectionSet, level, visiting, shapes);
        visiting.delete(name);
        shapes.set(name, inner);
      }
      if (inner && level - 1 + inner.depth > MAX_DEPTH) throw tooDeep();
      add(inner ?? NO_SHAPE, 0);
    }
  }
  return total;
}
const NO_SHAPE: Shape = { depth: 0, schemas: 0, introspections: 0 };

/** Adds a fragment to those being walked (`visiting`: the spreads inside one another), within MAX_FRAGMENT_NESTING. */
function enterFragment(visiting: Set<string>, name: string): void {
  if (visiting.size >= MAX_FRAGMENT_NESTING) {
    throw ApiError.invalid(`Query too deep: more than ${MAX_FRAGMENT_NESTING} fragments spread inside one another, at most ${MAX_FRAGMENT_NESTING} are allowed`);
  }
  visiting.add(name);
}

function tooDeep(): ApiError {
  return ApiError.invalid(`Query too deep: more than ${MAX_DEPTH} levels of nested fields, at most ${MAX_DEPTH} are allowed`);
}

/**
 * Depth and cost of a selection set at `level` under `path`, stopping as soon as it passes `budget` (divided
 * by the multiplier of a list above it), so a walk visits at most about 2 × MAX_COST selections whatever the
 * document. Fragments, and sets that read no variable and spread no fragment, are measured once (memoId).
 * More: docs/decisions/notes/graphql.md, "measure".
 */
function measure(
  walk: Walk,
  parent: GraphQLCompositeType,
  set: SelectionSetNode,
  path: readonly string[],
  level: number,
  visiting: Set<string>,
  budget: number,
): Measure {
  const id = memoId(walk, set);
  if (id === undefined) return measureSet(walk, parent, set, path, level, visiting, budget);
  const key = `${id}|${parent.name}|${level}|${walk.mayIntrospect}|${[...path].sort().join(',')}`;
  return withinBudget(walk.sets, key, (m) => m.cost, budget, () => measureSet(walk, parent, set, path, level, visiting, budget));
}

/**
 * The memo rule of measure and introspect: a kept result is reused where its cost fits `budget`;
 * otherwise the set is walked again, and what that walk returns is kept only when complete (within
 * `budget`). measureSet says why a complete result is the same under any budget it fits.
 */
function withinBudget<T>(memo: Map<string, T>, key: string, costOf: (result: T) => number, budget: number, walkSet: () => T): T {
  const known = memo.get(key);
  if (known !== undefined && costOf(known) <= budget) return known;
  const result = walkSet();
  if (costOf(result) <= budget) memo.set(key, result);
  return result;
}

/**
 * The memo id of a selection set: one number per distinct text (`{ fields { name } }`) in this walk, or
 * undefined when the set is not memoised: its text holds a `$` (it may read a variable, whose value the
 * walk reads) or `...` (it spreads a fragment or has an inline one, whose measure depends on the
 * fragments being walked), or the document has no locations. The same text parses to the same
 * selections, so with the same parent type, level and types on the path it measures the same.
 */
function memoId(walk: Walk, set: SelectionSetNode): number | undefined {
  if (!walk.memo) return undefined;
  let id = walk.setIds.get(set);
  if (id === undefined) {
    const loc = set.loc;
    const text = loc ? loc.source.body.slice(loc.start, loc.end) : undefined;
    if (text === undefined || text.includes('$') || text.includes('...')) {
      id = null;
    } else {
      id = walk.textIds.get(text);
      if (id === undefined) walk.textIds.set(text, (id = walk.textIds.size));
    }
    walk.setIds.set(set, id);
  }
  return id ?? undefined;
}

/**
 * measure's walk of one set. Its result is exact when its cost is within `budget`: the walk stops only
 * once a running total passes its budget, and a set that stopped early passes its caller's budget too
 * (what it returns is more than the share it was given, times the multiplier), so a cost within budget
 * was never cut short. Walked again under any budget at least that cost, the same set takes the same
 * steps and returns the same measure, so a kept measure is reused wherever its cost fits the budget.
 * Where it does not, the set is walked again for the exact partial cost a refusal reports; that walk
 * passes every budget above it, so the whole walk ends with it (at most one such walk per level).
 */
function measureSet(
  walk: Walk,
  parent: GraphQLCompositeType,
  set: SelectionSetNode,
  path: readonly string[],
  level: number,
  visiting: Set<string>,
  budget: number,
): Measure {
  const total: Measure = { ...NOTHING };
  const add = (m: Measure, times: number, depthOffset: number) => {
    total.depth = Math.max(total.depth, m.depth + depthOffset);
    total.cost = Math.min(COST_CEILING, total.cost + m.cost * times);
    total.schemas += m.schemas * times;
    total.introspections += m.introspections * times;
  };
  for (const sel of set.selections) {
    if (total.cost > budget) break;
    walk.nodes++;
    const left = budget - total.cost;
    if (sel.kind === Kind.FIELD) {
      const name = sel.name.value;
      if (name === '__schema' || name === '__type') {
        if (!walk.mayIntrospect) throw introspectionRefused();
        // Not counted in depth: introspection's depth is the schema's, and GraphiQL's query is deep.
        add({ depth: 0, cost: introspectionCost(walk, sel, left), schemas: name === '__schema' ? 1 : 0, introspections: 1 }, 1, 0);
        continue;
      }
      if (level > MAX_DEPTH) throw tooDeep();
      const own = { ...NOTHING, depth: 1, cost: FIELD_COSTS[`${parent.name}.${name}`] ?? 1 };
      add(own, 1, 0);
      const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
      const child = field ? getNamedType(field.type) : undefined;
      if (total.cost > budget || !field || !sel.selectionSet || !child || !isCompositeType(child)) continue;
      const reentry = path.includes(child.name);
      const times = multiplier(walk, parent, field, sel.arguments ?? []) * (reentry ? REENTRY_FACTOR : 1);
      const innerBudget = Math.floor((budget - total.cost) / Math.max(1, times));
      add(measure(walk, child, sel.selectionSet, reentry ? path : [...path, child.name], level + 1, visiting, innerBudget), times, 1);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      const type = sel.typeCondition ? compositeTypeNamed(walk, sel.typeCondition.name.value) : parent;
      if (type) add(measure(walk, type, sel.selectionSet, path, level, visiting, left), 1, 0);
    } else {
      add(measureFragment(walk, sel.name.value, parent, path, level, visiting, left), 1, 0);
    }
  }
  return total;
}

function measureFragment(
  walk: Walk,
  name: string,
  parent: GraphQLCompositeType,
  path: readonly string[],
  level: number,
  visiting: Set<string>,
  budget: number,
): Measure {
  const key = `${name}|${[...path].sort().join(',')}`;
  const known = walk.measured.get(key);
  // A complete measure, or a partial one already over this budget too.
  if (known && (known.complete || known.measure.cost > budget)) {
    if (level - 1 + known.measure.depth > MAX_DEPTH) throw tooDeep();
    return known.measure;
  }
  const fragment = walk.fragments.get(name);
  const type = fragment && compositeTypeNamed(walk, fragment.typeCondition.name.value);
  // Unknown, cyclic or on a type that selects nothing: graphql-js's validation refuses the document next.
  if (!fragment || !type || visiting.has(name)) return NOTHING;
  enterFragment(visiting, name);
  const result = measure(walk, type, fragment.selectionSet, path, level, visiting, budget);
  visiting.delete(name);
  walk.measured.set(key, { measure: result, complete: result.cost <= budget });
  return result;
}

/** The object, interface or union type of this name; undefined when the schema has none (validation's to answer). */
function compositeTypeNamed(walk: Walk, name: string): GraphQLCompositeType | undefined {
  const type = walk.schema.getType(name);
  return type && isCompositeType(type) ? type : undefined;
}

/**
 * How many times what a field selects may be built: `first` for a paginated field, the bound of a list
 * (LIST_BOUNDS), 1 for one object and for a connection's `edges` / `nodes` (the `first` of the field that
 * returned the connection counted them).
 */
function multiplier(walk: Walk, parent: GraphQLCompositeType, field: GraphQLField<unknown, unknown>, args: readonly ArgumentNode[]): number {
  const coordinate = `${parent.name}.${field.name}`;
  if (field.args.some((a) => a.name === 'first')) {
    const given = args.find((a) => a.name.value === 'first');
    const value = given ? argumentValue(walk, given.value, Kind.INT) : undefined;
    return pageSize(coordinate, value === undefined || value === null ? undefined : typeof value === 'number' ? value : NaN);
  }
  const bound = LIST_BOUNDS[coordinate];
  if (bound !== undefined) return bound;
  if (!isListType(getNullableType(field.type)) || parent.name.endsWith('Connection')) return 1;
  throw new Error(`graphql: the list ${coordinate} has no bound (add it to LIST_BOUNDS or give it 'first')`);
}

/**
 * An argument's value as execution will see it: literal, variable, or the variable's default. The limits
 * run before graphql-js's validation, so a literal of another kind than the argument's (`first: "x"`,
 * `first: 1.5`, an Int past 32 bits, `name: 3`) reads as left out: validation then refuses it with its
 * own error, as it did when it ran first. A variable's value is read as sent (execution coerces it).
 */
function argumentValue(walk: Walk, node: ValueNode, kind: Kind.INT | Kind.STRING): unknown {
  if (node.kind === Kind.VARIABLE) {
    const name = node.name.value;
    if (Object.hasOwn(walk.variables, name)) return walk.variables[name];
    const fallback = walk.defaults.get(name);
    return fallback ? argumentValue(walk, fallback, kind) : undefined;
  }
  if (node.kind === Kind.NULL) return null;
  if (node.kind === Kind.INT && kind === Kind.INT) {
    const n = Number(node.value);
    return n >= INT32_MIN && n <= INT32_MAX ? n : undefined;
  }
  if (node.kind === Kind.STRING && kind === Kind.STRING) return node.value;
  return undefined;
}
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * What an introspection field would return from this schema, one per field of each object it reaches:
 * the walk runs graphql-js's own introspection resolvers over the schema (as execution will), arguments
 * such as `includeDeprecated` taken at their largest. It stops once past `budget` (what is left of
 * MAX_COST for the whole operation, not a budget of its own per field), so asking more, or asking it
 * under a thousand aliases, costs no more work here.
 */
function introspectionCost(walk: Walk, node: FieldNode, budget: number): number {
  if (!node.selectionSet) return 1;
  if (node.name.value === '__schema') return 1 + introspect(walk, __Schema, walk.schema, node.selectionSet, new Set(), budget - 1);
  const nameArg = node.arguments?.find((a) => a.name.value === 'name');
  const typeName = nameArg ? argumentValue(walk, nameArg.value, Kind.STRING) : undefined;
  const type = typeof typeName === 'string' ? walk.schema.getType(typeName) : undefined;
  return 1 + (type ? introspect(walk, __Type, type, node.selectionSet, new Set(), budget - 1) : 0);
}

/**
 * What `set` costs on the schema object `source` of the introspection type `type`. Memoised as measure
 * is, by the object, the type and the set's text (memoId): a complete cost (within its budget) is
 * reused wherever it fits the budget, and the set is walked again where it does not.
 */
function introspect(walk: Walk, type: GraphQLObjectType, source: unknown, set: SelectionSetNode, visiting: Set<string>, budget: number): number {
  const id = typeof source === 'object' && source !== null ? memoId(walk, set) : undefined;
  if (id === undefined) return introspectSet(walk, type, source, set, visiting, budget);
  const object = source as object;
  let costs = walk.introspections.get(object);
  if (!costs) walk.introspections.set(object, (costs = new Map()));
  return withinBudget(costs, `${type.name}|${id}`, (cost) => cost, budget, () => introspectSet(walk, type, source, set, visiting, budget));
}

function introspectSet(walk: Walk, type: GraphQLObjectType, source: unknown, set: SelectionSetNode, visiting: Set<string>, budget: number): number {
  let cost = 0;
  for (const sel of set.selections) {
    if (cost > budget) break;
    walk.nodes++;
    if (sel.kind === Kind.FIELD) {
      cost += 1;
      const field = type.getFields()[sel.name.value];
      const child = field ? getNamedType(field.type) : undefined;
      if (!field || !sel.selectionSet || !child || !isObjectType(child)) continue;
      for (const item of introspected(walk, source, field)) {
        if (cost > budget) break;
        cost += introspect(walk, child, item, sel.selectionSet, visiting, budget - cost);
      }
    } else {
      const fragment = sel.kind === Kind.INLINE_FRAGMENT ? sel : walk.fragments.get(sel.name.value);
      const key = sel.kind === Kind.FRAGMENT_SPREAD ? sel.name.value : '';
      if (!fragment || visiting.has(key)) continue;
      if (key) enterFragment(visiting, key);
      cost += introspect(walk, type, source, fragment.selectionSet, visiting, budget - cost);
      if (key) visiting.delete(key);
    }
  }
  return cost;
}

/**
 * What an introspection field returns for `source`, as a list, resolved once per walk: aliases and
 * nested selections ask the same few schema objects the same questions (`fields` of `Query` …), and
 * graphql-js's resolvers build a new array each time.
 */
function introspected(walk: Walk, source: unknown, field: GraphQLField<unknown, unknown>): unknown[] {
  const key = typeof source === 'object' && source !== null ? source : undefined;
  let bySource = key ? walk.introspected.get(key) : undefined;
  const known = bySource?.get(field.name);
  if (known) return known;
  const value: unknown = field.resolve
    ? field.resolve(source, { includeDeprecated: true }, undefined, { schema: walk.schema } as GraphQLResolveInfo)
    : (source as Record<string, unknown>)[field.name];
  const items: unknown[] = Array.isArray(value) ? value : value === null || value === undefined ? [] : [value];
  if (key) {
    if (!bySource) walk.introspected.set(key, (bySource = new Map()));
    bySource.set(field.name, items);
  }
  return items;
}
