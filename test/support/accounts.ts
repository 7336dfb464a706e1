import { createClient, PgwError } from '../../packages/client/src/index';
import { ApiClient } from './client';

export interface TestAccount {
  id: string;
  sk: string;
  pk: string;
  /** Client authenticated with the account's full secret key. */
  api: ApiClient;
}

let counter = 0;

/** A fresh sandbox account per test, so tests never share state. */
export async function createAccount(baseUrl: string, name = `test account ${++counter}`): Promise<TestAccount> {
  // Through @pgw/client, as an integrator would (issue 19): every test file exercises it.
  try {
    const { data } = await createClient({ baseUrl }).POST('/sandbox/accounts', { body: { name } });
    return { id: data.id, sk: data.sk, pk: data.pk, api: new ApiClient(baseUrl, data.sk) };
  } catch (err) {
    if (!(err instanceof PgwError)) throw err;
    throw new Error(`could not create account: ${err.status} ${err.code}: ${err.message}`, { cause: err });
  }
}

export function idempotencyKey(): string {
  return `test-${Date.now()}-${Math.random().toString(36).slice(2, 12)}`;
}
