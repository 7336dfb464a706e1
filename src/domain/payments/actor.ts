/** Who is calling a service: the account, and the API key (null for payment-link and checkout pages). */
export interface Actor {
  accountId: string;
  apiKeyId: string | null;
}

/** Services accept an Actor or a bare account id. */
export type ActorOrAccount = Actor | string;

export function accountIdOf(a: ActorOrAccount): string {
  return typeof a === 'string' ? a : a.accountId;
}
