import { ApiError } from '../errors';

/**
 * What stops an operation the cost limit let through but that runs too long or answers too much (JSON values
 * cost 1 whatever their size): a deadline every resolver checks before it starts, and a cap on the serialized
 * answer. Either answers one `invalid_request` error, never a truncated answer. More:
 * docs/decisions/notes/graphql.md, "Execution limits".
 */

const DEADLINE = Symbol('graphql execution deadline');

/** Shared by reference: Apollo hands resolvers a shallow copy of the context, and the flag must come back. */
interface Deadline {
  at: number;
  passed: boolean;
}

interface WithDeadline {
  [DEADLINE]?: Deadline;
}

/** Starts the clock of one execution (one HTTP request, one WebSocket query or mutation). */
export function startDeadline(context: object, ms: number): void {
  // An in-process interval: on the monotonic clock, which a step of the wall clock does not move.
  (context as WithDeadline)[DEADLINE] = { at: performance.now() + ms, passed: false };
}

/** True once a resolver of this execution found its deadline passed. */
export function deadlinePassed(context: object): boolean {
  return (context as WithDeadline)[DEADLINE]?.passed === true;
}

export function deadlineError(ms: number): ApiError {
  return ApiError.invalid(
    `Query took too long: execution was stopped after ${ms} ms, the most allowed. Ask for fewer items (first) or fewer fields; a mutation that had started was completed.`,
  );
}

export function responseTooLarge(bytes: number, max: number): ApiError {
  return ApiError.invalid(
    `Response too large: ${bytes} bytes, at most ${max} are sent. Ask for fewer items (first) or fewer fields; a mutation in this operation was executed.`,
  );
}

/** The serialized size of a result, when it is over `max` (one stringify, then dropped). */
export function oversize(result: unknown, max: number): number | null {
  const bytes = Buffer.byteLength(JSON.stringify(result));
  return bytes > max ? bytes : null;
}

type AnyResolver = (parent: unknown, args: unknown, context: object, info: unknown) => unknown;

function checked(resolve: AnyResolver): AnyResolver {
  return (parent, args, context, info) => {
    const deadline = (context as WithDeadline | undefined)?.[DEADLINE];
    if (deadline !== undefined && performance.now() >= deadline.at) {
      deadline.passed = true;
      throw ApiError.invalid('Query took too long: execution was stopped');
    }
    return resolve(parent, args, context, info);
  };
}

/**
 * The resolver map with every field function behind the deadline check (scalars and subscription
 * `subscribe` functions are left as they are: a subscription has no deadline, each message is small).
 */
export function withDeadlines<T extends object>(resolvers: T): T {
  const out: Record<string, unknown> = {};
  for (const [typeName, fields] of Object.entries(resolvers)) {
    if (typeof fields !== 'object' || fields === null || Object.getPrototypeOf(fields) !== Object.prototype) {
      out[typeName] = fields;
      continue;
    }
    out[typeName] = Object.fromEntries(
      Object.entries(fields as Record<string, unknown>).map(([name, r]) => [name, typeof r === 'function' ? checked(r as AnyResolver) : r]),
    );
  }
  return out as T;
}
