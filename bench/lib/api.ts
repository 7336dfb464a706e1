import { randomBytes } from 'node:crypto';

/** A minimal JSON client for the bench's set-up steps (not measured). */
export interface ApiResponse<T = any> {
  status: number;
  body: T;
}

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly sk?: string,
  ) {}

  get authHeaders(): Record<string, string> {
    return this.sk ? { authorization: `Bearer ${this.sk}` } : {};
  }

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { ...this.authHeaders, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: parseBody(await res.text()) as T };
  }

  /** Like request(), but throws unless the status is `expect`. */
  async must<T = any>(expect: number, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
    const res = await this.request<T>(method, path, body, headers);
    if (res.status !== expect) throw new Error(`${method} ${path}: expected ${expect}, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body;
  }
}

/** An answer's body: its JSON, or the text itself when it is not JSON (undefined when empty). */
export function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

export interface BenchAccount {
  id: string;
  sk: string;
  api: Api;
}

export async function createAccount(gatewayUrl: string, name: string): Promise<BenchAccount> {
  const anon = new Api(`${gatewayUrl}/v1`);
  const body = await anon.must<{ id: string; sk: string }>(201, 'POST', '/sandbox/accounts', { name });
  return { id: body.id, sk: body.sk, api: new Api(`${gatewayUrl}/v1`, body.sk) };
}

export const idempotencyKey = () => `bench-${randomBytes(9).toString('hex')}`;

/** The create body used by every POST row (gateway and Prism): a reference payment, which starts no rail timers. */
export const CREATE_INTENT_BODY = {
  amount: 25_000,
  currency: 'AOA',
  payment_method: 'multicaixa_reference',
  merchant_reference: 'order-bench',
  metadata: { order_id: 'bench' },
};

export async function createReferenceIntent(api: Api): Promise<{ id: string; reference: { number: string } }> {
  return api.must(201, 'POST', '/payment_intents', CREATE_INTENT_BODY, { 'idempotency-key': idempotencyKey() });
}
