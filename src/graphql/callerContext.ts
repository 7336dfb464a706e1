import type { Config } from '../config';
import type { Admission } from '../operations/admit';
import { createClientTokenContext } from './clientTokenScope';
import { createContext, createKeylessContext, type GraphQLContext } from './context';
import type { GatewayRuntime } from '../domain/gatewayRuntime';

/** The resolvers' context for the admitted caller (`ws`: one context serves every message of a subscription). */
export function contextOf(
  admission: Admission,
  requestId: string,
  gateway: { config: Config; runtime: GatewayRuntime },
  ip: string,
  transport: 'http' | 'ws' = 'http',
): GraphQLContext {
  const caller = admission.caller;
  const { config, runtime } = gateway;
  if (caller.kind === 'clientToken') return createClientTokenContext(caller, requestId, config, runtime, ip);
  if (caller.kind === 'public' || !admission.auth) return createKeylessContext(requestId, config, runtime, ip);
  return createContext(admission.auth, requestId, config, runtime, ip, transport);
}
