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
  const anon = new ApiClient(baseUrl);
  const res = await anon.post('/sandbox/accounts', { name });
  if (res.status !== 201) throw new Error(`could not create account: ${res.status} ${res.text}`);
  return { id: res.body.id, sk: res.body.sk, pk: res.body.pk, api: new ApiClient(baseUrl, res.body.sk) };
}

export function idempotencyKey(): string {
  return `test-${Date.now()}-${Math.random().toString(36).slice(2, 12)}`;
}
