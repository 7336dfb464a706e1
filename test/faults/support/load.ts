import { sleep } from './fixtures';
import type { Prng } from './prng';

/**
 * A payments workload that behaves like a careful client: every create carries an Idempotency-Key
 * and a merchant_reference unique to that key, and a request that gets no answer (connection refused
 * or reset while a gateway is down) or a 5xx is retried with the same key and body until it is
 * answered. What was asked and what came back is recorded, for the invariants checked afterwards.
 */
export interface LoadAccount {
  id: string;
  sk: string;
}

export interface CreateRecord {
  kind: 'payment' | 'refund';
  account: LoadAccount;
  key: string;
  body: Record<string, unknown>;
  /** Id of the object from the (first) 201 answer. */
  id?: string;
  status?: number;
}

export interface LoadStats {
  requests: number;
  /** Attempts that got no HTTP answer (gateway down, connection reset). */
  noAnswer: number;
  /** 5xx answers (retried). */
  fiveXx: number;
  fiveXxSamples: string[];
  /** Answers to retries of a request sent before: a replay or the first answer. */
  retried: number;
  replays: number;
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

export const EXPRESS_MOBILES = ['923000000', '923000001', '923000002', '923000003', '923000004', '912345678'];
const RETRY_DEADLINE_MS = 120_000;

export class PaymentsLoad {
  readonly creates: CreateRecord[] = [];
  readonly stats: LoadStats = { requests: 0, noAnswer: 0, fiveXx: 0, fiveXxSamples: [], retried: 0, replays: 0 };
  /** Payments known to be paid, for refunds: id, amount, account. */
  private readonly paid: Array<{ id: string; amount: number; account: LoadAccount }> = [];
  private readonly express: Array<{ id: string; account: LoadAccount }> = [];
  private running = false;
  /** Background retries of creates that got no answer. */
  private readonly inDoubt: Promise<unknown>[] = [];
  private workers: Promise<void>[] = [];
  private nextUrl = 0;
  private keySeq = 0;

  constructor(
    /** Base URLs to spread requests over (read at each attempt: a restarted gateway may move). */
    private readonly urls: () => string[],
    private readonly accounts: LoadAccount[],
    private readonly rng: Prng,
    private readonly tag: string,
  ) {}

  start(workers: number): void {
    this.running = true;
    this.workers = Array.from({ length: workers }, (_, i) => this.worker(i));
  }

  /** Stops issuing new operations; resolves when every one issued has its answer. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
    await Promise.all(this.inDoubt);
  }

  /** One HTTP exchange, retried until answered (not 5xx, not an idempotency key still in progress). */
  async call(method: string, path: string, sk: string, body?: unknown, key?: string): Promise<Answer> {
    const deadline = Date.now() + RETRY_DEADLINE_MS;
    for (let attempt = 0; ; attempt++) {
      const res = await this.attempt(method, path, sk, body, key);
      if (res) {
        if (attempt > 0) this.stats.retried++;
        return res;
      }
      if (Date.now() > deadline) throw new Error(`${method} ${path}: no answer after ${RETRY_DEADLINE_MS} ms of retries`);
      await sleep(150 + Math.min(attempt, 10) * 50);
    }
  }

  /** One attempt; undefined when it has to be retried (no answer, 5xx, key still in progress). */
  private async attempt(method: string, path: string, sk: string, body?: unknown, key?: string): Promise<Answer | undefined> {
    const urls = this.urls();
    const base = urls[this.nextUrl++ % urls.length]!;
    const headers: Record<string, string> = { authorization: `Bearer ${sk}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (key) headers['idempotency-key'] = key;
    this.stats.requests++;
    try {
      const res = await fetch(`${base}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
      const text = await res.text();
      const parsed = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
      if (res.status >= 500) {
        this.stats.fiveXx++;
        if (this.stats.fiveXxSamples.length < 10) this.stats.fiveXxSamples.push(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
        return undefined;
      }
      const inProgress = res.status === 409 && parsed?.error?.code === 'idempotency_conflict' && /still being processed/.test(parsed.error.message);
      if (inProgress) return undefined;
      if (res.headers.get('idempotency-replayed') === 'true') this.stats.replays++;
      return { status: res.status, body: parsed, headers: res.headers };
    } catch {
      this.stats.noAnswer++;
      return undefined;
    }
  }

  /**
   * A create: one attempt now; when it has no answer (the gateway died with it in flight, or its key
   * is still leased by the dead process) it is retried in the background with the same key and body,
   * as a client's retry queue would, and the worker moves on.
   */
  private async create(rec: CreateRecord, path: string): Promise<CreateRecord> {
    this.creates.push(rec);
    const settle = (res: Answer) => {
      rec.status = res.status;
      if (res.status === 201) rec.id = res.body.id;
      return rec;
    };
    const first = await this.attempt('POST', path, rec.account.sk, rec.body, rec.key);
    if (first) return settle(first);
    this.inDoubt.push(this.call('POST', path, rec.account.sk, rec.body, rec.key).then(settle));
    return rec;
  }

  newKey(): string {
    return `${this.tag}-${++this.keySeq}-${this.rng.alnum(8)}`;
  }

  createPayment(account: LoadAccount, body: Record<string, unknown>): Promise<CreateRecord> {
    const key = this.newKey();
    return this.create({ kind: 'payment', account, key, body: { ...body, merchant_reference: `mr-${key}` } }, '/payment_intents');
  }

  createRefund(account: LoadAccount, body: Record<string, unknown>): Promise<CreateRecord> {
    return this.create({ kind: 'refund', account, key: this.newKey(), body }, '/refunds');
  }

  private async worker(index: number): Promise<void> {
    while (this.running) {
      const account = this.accounts[(index + this.rng.int(0, this.accounts.length - 1)) % this.accounts.length]!;
      const action = this.rng.weighted([
        ['express', 30],
        ['reference', 25],
        ['refund', 15],
        ['refundRace', 5],
        ['duplicate', 8],
        ['cancelExpress', 5],
        ['check', 12],
      ] as const);
      await this.run(action, account);
    }
  }

  private async run(action: string, account: LoadAccount): Promise<void> {
    const rng = this.rng;
    switch (action) {
      case 'express':
      case 'cancelExpress': {
        const rec = await this.createPayment(account, { amount: rng.int(100, 90_000), currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: rng.pick(EXPRESS_MOBILES) } });
        if (!rec.id) return;
        this.express.push({ id: rec.id, account });
        // Cancel races the rail (PENDING → PROCESSING at +2 s): 200 CANCELLED or 409, never both outcomes.
        if (action === 'cancelExpress') await this.call('POST', `/payment_intents/${rec.id}/cancel`, account.sk);
        return;
      }
      case 'reference': {
        const amount = rng.int(1_000, 200_000);
        const rec = await this.createPayment(account, { amount, currency: 'AOA', payment_method: 'multicaixa_reference', ...(rng.bool(0.3) ? { metadata: { order: rng.alnum(6) } } : {}) });
        if (!rec.id) return;
        const number = (await this.call('GET', `/payment_intents/${rec.id}`, account.sk)).body.reference?.number;
        const fate = rng.weighted([['pay', 6], ['cancel', 1], ['leave', 3]] as const);
        if (fate === 'pay') {
          const res = await this.call('POST', '/sandbox/simulate/reference_paid', account.sk, { reference: number });
          // 409 when a retried attempt had already paid it.
          if (res.status === 200 || res.status === 409) this.paid.push({ id: rec.id, amount, account });
        } else if (fate === 'cancel') {
          await this.call('POST', `/payment_intents/${rec.id}/cancel`, account.sk);
        }
        return;
      }
      case 'refund': {
        const target = this.pickPaid(account);
        if (!target) return;
        const body: Record<string, unknown> = { payment_intent: target.id };
        if (rng.bool(0.7)) body.amount = rng.int(1, Math.max(1, Math.floor(target.amount / 3)));
        await this.createRefund(account, body);
        return;
      }
      case 'refundRace': {
        // Two refunds of 60 % each at once: at most one may succeed.
        const target = this.pickPaid(account);
        if (!target) return;
        const amount = Math.ceil(target.amount * 0.6);
        await Promise.all([this.createRefund(account, { payment_intent: target.id, amount }), this.createRefund(account, { payment_intent: target.id, amount })]);
        return;
      }
      case 'duplicate': {
        // The same create twice at once, same key and body: one object.
        const key = this.newKey();
        const body = { amount: rng.int(100, 50_000), currency: 'AOA', payment_method: 'multicaixa_reference', merchant_reference: `mr-${key}` };
        await Promise.all([0, 1].map(() => this.create({ kind: 'payment', account, key, body }, '/payment_intents')));
        return;
      }
      case 'check': {
        const known = this.express.filter((e) => e.account === account);
        if (!known.length) return;
        const e = rng.pick(known);
        const res = await this.call('GET', `/payment_intents/${e.id}`, account.sk);
        if (res.status === 200 && res.body.status === 'SUCCEEDED' && !this.paid.some((p) => p.id === e.id)) this.paid.push({ id: e.id, amount: res.body.amount, account });
        return;
      }
    }
  }

  private pickPaid(account: LoadAccount) {
    const mine = this.paid.filter((p) => p.account === account);
    return mine.length ? this.rng.pick(mine) : undefined;
  }
}
