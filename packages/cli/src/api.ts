import { createHash } from 'node:crypto';
import { createClient, PgwError, type PgwClient } from '@pgw/client';
import type { Connection } from './connection';
import { apiFailure } from './errors';

export const CLI_VERSION = '0.1.0';

/** The typed REST client (retries 429/503 by Retry-After, makes idempotency keys) for one connection. */
export function apiClient(conn: Connection): PgwClient {
  return createClient({ baseUrl: conn.baseUrl, apiKey: conn.apiKey, headers: { 'User-Agent': `pgw/${CLI_VERSION}` } });
}

/** What an account id looks like (`acct_` and letters or digits): nothing else names a file of pgw's. */
export const ACCOUNT_ID = /^acct_[A-Za-z0-9]+$/;

/**
 * The account id a server answered, checked before pgw uses it in a file name or saves it: a server that
 * answers anything else (`../..`, a path, a very long string) is refused, so it cannot make pgw write
 * outside its config directory.
 */
export function checkedAccountId(id: unknown, baseUrl: string): string {
  if (typeof id === 'string' && id.length <= 64 && ACCOUNT_ID.test(id)) return id;
  const shown = typeof id === 'string' ? `'${id.slice(0, 64)}'` : String(id);
  throw apiFailure('invalid_response', `${baseUrl}/v1/account answered account id ${shown}, not an acct_ id: refusing to use it`);
}

/**
 * The id of the key's account, to name what pgw keeps per account (checked: checkedAccountId). A
 * restricted key without `account:read` still works: it is then named by a hash of the key (never the key
 * itself).
 */
export async function accountIdOf(api: PgwClient, conn: Connection): Promise<string> {
  try {
    const { data } = await api.GET('/account');
    return checkedAccountId(data.id, conn.baseUrl);
  } catch (err) {
    if (err instanceof PgwError && err.code === 'permission_denied') {
      return `key_${createHash('sha256').update(conn.apiKey).digest('hex').slice(0, 16)}`;
    }
    throw err;
  }
}
