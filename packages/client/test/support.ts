import { afterAll, beforeAll } from 'vitest';
import { startTestServer, type TestServer } from '../../../test/support/server';
import { createClient, type PgwClient, type PgwClientOptions } from '../src/index';

export interface ClientAccount {
  id: string;
  sk: string;
  pk: string;
  /** A client holding the account's secret key. */
  client: PgwClient;
}

/** Creates a sandbox account through the client itself (POST /sandbox/accounts is public). */
export async function createClientAccount(baseUrl: string, options: PgwClientOptions = {}): Promise<ClientAccount> {
  const { data } = await createClient({ baseUrl }).POST('/sandbox/accounts', { body: { name: 'client test' } });
  return { id: data.id, sk: data.sk, pk: data.pk, client: createClient({ ...options, baseUrl, apiKey: data.sk }) };
}

/** One real gateway for the file (ephemeral port, embedded engine or MONGODB_URI), stopped after it. */
export function useGateway(env: Record<string, string> = {}): { readonly server: TestServer } {
  const holder = {} as { server: TestServer };
  beforeAll(async () => {
    holder.server = await startTestServer(env);
  });
  afterAll(async () => {
    await holder.server?.stop();
  });
  return holder;
}

export const EXPRESS_SUCCESS = { amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } } as const;
