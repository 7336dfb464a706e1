import type { Config } from '../config';
import type { Admission } from '../operations/admit';
import { createClientTokenContext } from './clientTokenScope';
import { createContext, createKeylessContext, type GraphQLContext } from './context';
import { Kind, type OperationDefinitionNode } from './graphqljs';
import type { GatewayRuntime } from '../domain/gatewayRuntime';
import type { ClientTokenStreams } from '../realtime/clientTokenStreams';

/**
 * The resolvers' context for the admitted caller (`ws`: one context serves every message of a
 * subscription). `operation`: what the request runs, which decides whether the account's clock as the
 * count read it goes to the resolvers (clockReadStands).
 */
export function contextOf(
  admission: Admission,
  requestId: string,
  gateway: { config: Config; runtime: GatewayRuntime; clientTokenStreams: ClientTokenStreams },
  ip: string,
  transport: 'http' | 'ws' = 'http',
  operation?: OperationDefinitionNode | null,
): GraphQLContext {
  const caller = admission.caller;
  const { config, runtime } = gateway;
  if (caller.kind === 'clientToken') return createClientTokenContext(caller, requestId, gateway, ip);
  if (caller.kind === 'public' || !admission.auth) return createKeylessContext(requestId, config, runtime, ip);
  const account = clockReadStands(operation) ? admission.account : undefined;
  return createContext(admission.auth.key, requestId, config, runtime, ip, transport, { account, ahead: admission.ahead });
}

/**
 * Whether every field of the operation may use the clock the count read: a query's fields move no
 * clock, nor does a mutation's only field before it runs. Of several mutation fields (run one after
 * another), one may move it (advanceSandboxClock) before the next: each then reads the account itself.
 */
function clockReadStands(operation: OperationDefinitionNode | null | undefined): boolean {
  if (operation?.operation !== 'mutation') return true;
  const fields = operation.selectionSet.selections;
  return fields.length === 1 && fields[0]!.kind === Kind.FIELD;
}
