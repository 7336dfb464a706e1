import type { Config } from '../config';
import type { ApiKeyRecord } from '../domain/accounts/apiKeyModel';
import { authenticateClientToken as findClientToken, isClientTokenLike, requireGrantFor, type ClientTokenGrant } from '../domain/clientTokens/clientTokenService';
import type { Actor } from '../domain/payments/actor';
import type { PublicPaymentView } from '../domain/payments/paymentSerializer';
import { ApiError } from '../errors';
import { bearerSecret } from '../operations/bearer';
import type { ClientTokenCaller } from '../operations/caller';
import type { GraphQLContext } from './context';
import {
  getOperationAST,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from './graphqljs';
import type { Loaders } from './loaders';
import type { GatewayRuntime } from '../domain/gatewayRuntime';
import type { ClientTokenStreams } from '../realtime/clientTokenStreams';

/**
 * Client tokens on GraphQL (`Authorization: Bearer ct_test_…` over HTTP, `connection_init` payload
 * `{clientToken}` over WebSocket). A token runs one thing: `paymentIntent(id)` or the subscription
 * `paymentIntentUpdated(id)` of its own payment, selecting only fields of the public view. Checked on
 * the document before anything runs: a mutation, another root field, or a field beyond the public view
 * is 403 `permission_denied`; another payment's id is 401 `authentication_failed`.
 */

const denied = (what: string) =>
  new ApiError('permission_denied', `A client token reads only its payment's public view (paymentIntent, node, paymentIntentUpdated); ${what} needs an API key.`);

type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

/**
 * The GraphQL fields a token may select, per type. PaymentIntent's are the public view's (the compiler
 * holds this list to PublicPaymentView's keys, camel-cased; `object` has no GraphQL field).
 */
const PUBLIC_INTENT_FIELDS = {
  id: true,
  object: true,
  amount: true,
  currency: true,
  paymentMethod: true,
  status: true,
  failureCode: true,
  reference: true,
  amountRefunded: true,
  livemode: true,
  createdAt: true,
  updatedAt: true,
} as const satisfies Record<Camel<keyof PublicPaymentView>, true>;

interface Allowed {
  fields: ReadonlySet<string>;
  /** The type each object-valued field selects from. */
  children: Readonly<Record<string, Allowed>>;
}
const reference: Allowed = { fields: new Set(['entity', 'number', 'expiresAt']), children: {} };
const intent: Allowed = { fields: new Set(Object.keys(PUBLIC_INTENT_FIELDS)), children: { reference } };
const update: Allowed = { fields: new Set(['snapshot', 'eventType', 'eventId', 'paymentIntent']), children: { paymentIntent: intent } };
/**
 * The root fields a token may call, by operation type, and what each may select. `node(id:)` is Relay's
 * refetch of the same payment (useRefetchableFragment): the token's own id, so a PaymentIntent, read
 * as `paymentIntent` reads it (its inline fragments are checked as the payment's own fields).
 */
const ROOTS: Record<string, Readonly<Record<string, Allowed>>> = {
  query: { paymentIntent: intent, node: intent },
  subscription: { paymentIntentUpdated: update },
};

/** Throws unless the operation is one a token may run, on its own payment. */
export function checkClientTokenOperation(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  grant: ClientTokenGrant,
): void {
  const operation = getOperationAST(document, operationName);
  if (!operation) return; // graphql-js answers an unknown or ambiguous operation name itself
  const root = ROOTS[operation.operation];
  if (!root) throw denied(`a ${operation.operation}`);
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  // Fields of every selection set, fragments included (a cyclic spread is refused by validation; here
  // each fragment is entered once per path).
  const walk = (set: SelectionSetNode, visit: (name: string, sel: SelectionSetNode | undefined, args: readonly { name: { value: string }; value: ValueNode }[]) => void, seen = new Set<string>()) => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value !== '__typename') visit(sel.name.value, sel.selectionSet, sel.arguments ?? []);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        walk(sel.selectionSet, visit, seen);
      } else {
        const fragment = fragments.get(sel.name.value);
        if (fragment && !seen.has(fragment.name.value)) walk(fragment.selectionSet, visit, new Set([...seen, fragment.name.value]));
      }
    }
  };
  const checkSelection = (allowed: Allowed, set: SelectionSetNode | undefined, path: string) => {
    if (!set) return;
    walk(set, (name, sub) => {
      if (!allowed.fields.has(name)) throw denied(`the field ${path}.${name}`);
      const child = allowed.children[name];
      if (child) checkSelection(child, sub, `${path}.${name}`);
    });
  };
  walk(operation.selectionSet, (name, sub, args) => {
    const selects = root[name];
    if (!selects) throw denied(`the field ${name}`);
    const id = args.find((a) => a.name.value === 'id')?.value;
    const value = id?.kind === Kind.STRING ? id.value : id?.kind === Kind.VARIABLE ? variables?.[id.name.value] : undefined;
    requireGrantFor(grant, typeof value === 'string' ? value : '');
    checkSelection(selects, sub, name);
  });
}

/** The token in an HTTP `Authorization` header, when it holds a client token rather than a key. */
export function clientTokenOfHeader(authorization: string | undefined): string | undefined {
  const secret = bearerSecret(authorization);
  return isClientTokenLike(secret) ? secret : undefined;
}

/** `connection_init` with `{clientToken}`: the token, once it works (throws the 401 otherwise); undefined without one. */
export async function connectionClientToken(params: unknown): Promise<string | undefined> {
  const token = (params as { clientToken?: unknown } | undefined)?.clientToken;
  if (token === undefined) return undefined;
  await findClientToken(typeof token === 'string' ? token : '');
  return token as string;
}

export function createClientTokenContext(
  caller: ClientTokenCaller,
  requestId: string,
  gateway: { config: Config; runtime: GatewayRuntime; clientTokenStreams: ClientTokenStreams },
  clientIp: string,
): GraphQLContext {
  return new ClientTokenContext(caller, requestId, gateway.config, gateway.runtime, gateway.clientTokenStreams, clientIp);
}

/**
 * The context of a token's operation: the account is the token's, and there is no key, so any resolver
 * that checks a key's permission (requireOperation) or uses the key's loaders is refused with 403. The
 * refusals are getters on the prototype, as in KeylessContext (Apollo copies contexts with Object.assign).
 */
class ClientTokenContext implements GraphQLContext {
  /** Sent without a key, like a keyless request: no introspection, nothing counted on a key. */
  readonly authenticated = false;
  readonly errorCodes: string[] = [];
  readonly actor: Actor;
  readonly clientToken: ClientTokenGrant;
  constructor(
    readonly caller: ClientTokenCaller,
    readonly requestId: string,
    readonly config: Config,
    readonly runtime: GatewayRuntime,
    readonly clientTokenStreams: ClientTokenStreams,
    readonly clientIp: string,
  ) {
    this.actor = caller.actor;
    this.clientToken = caller.grant;
  }
  get key(): ApiKeyRecord {
    throw denied('this');
  }
  get loaders(): Loaders {
    throw denied('this');
  }
}
