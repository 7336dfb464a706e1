import { createHash } from 'node:crypto';
import { createClient, PgwError, type PgwClient } from '@pgw/client';
import type { Connection } from './connection';

export const CLI_VERSION = '0.1.0';

/** The typed REST client (retries 429/503 by Retry-After, makes idempotency keys) for one connection. */
export function apiClient(conn: Connection): PgwClient {
  return createClient({ baseUrl: conn.baseUrl, apiKey: conn.apiKey, headers: { 'User-Agent': `pgw/${CLI_VERSION}` } });
}

/**
 * The id of the key's account, to name what pgw keeps per account. A restricted key without
 * `account:read` still works: it is then named by a hash of the key (never the key itself).
 */
export async function accountIdOf(api: PgwClient, conn: Connection): Promise<string> {
  try {
    const { data } = await api.GET('/account');
    return data.id;
  } catch (err) {
    if (err instanceof PgwError && err.code === 'permission_denied') {
      return `key_${createHash('sha256').update(conn.apiKey).digest('hex').slice(0, 16)}`;
    }
    throw err;
  }
}
