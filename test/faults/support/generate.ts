import type { Contract, OperationSpec, Schema } from './contract';
import type { Prng } from './prng';

/** Real objects of the fuzzed account, so that valid requests reach the services, not only the validators. */
export interface FuzzFixtures {
  sk: string;
  pk: string;
  /** A restricted key with read permissions only. */
  readOnlyKey: string;
  revokedKey: string;
  /** Secret key of another account. */
  otherSk: string;
  paymentIds: string[];
  /** Reference payments paid at setup: refundable. */
  paidPaymentIds: string[];
  /** Numbers of PENDING reference payments (simulate targets). */
  referenceNumbers: string[];
  /** A payment made through a payment link (the public stream serves it). */
  publicPaymentId: string;
  refundId: string;
  linkId: string;
  linkCode: string;
  sessionId: string;
  endpointId: string;
  deliveryId: string;
  /** A client token of publicPaymentId, for the `client_token` of its public read and stream. */
  clientToken: string;
  /** Client tokens that fuzzed DELETE /client_tokens/{id} may revoke (not the one above). */
  spareClientTokenIds: string[];
  /** Restricted keys that fuzzed DELETE /api_keys/{id} may revoke. */
  spareKeyIds: string[];
  /** Trusted documents (`sha256:<hex>`) that fuzzed DELETE /graphql/documents/{id} may remove. */
  spareDocumentIds: string[];
  receiverUrl: string;
  /** Ids of the other account's objects, for cross-account path params. */
  foreignIds: string[];
}

export interface BaseRequest {
  pathParams: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** undefined = no body sent. */
  body?: unknown;
}

const MOBILES = ['923000000', '923000001', '923000002', '923000003', '923000004', '912345678', '999999999'];

/** The value a path parameter takes in a valid request, by the route it belongs to. */
export function pathParamValue(op: OperationSpec, name: string, fx: FuzzFixtures, rng: Prng): string {
  if (name === 'delivery_id') return fx.deliveryId;
  const p = op.path;
  if (p.startsWith('/public/payments/')) return fx.publicPaymentId;
  if (p.startsWith('/payment_intents/')) return rng.pick(fx.paymentIds);
  if (p.startsWith('/refunds/')) return fx.refundId;
  if (p.startsWith('/public/payment_links/') || p.startsWith('/pay/')) return fx.linkCode;
  if (p.startsWith('/payment_links/')) return fx.linkId;
  if (p.includes('checkout')) return fx.sessionId;
  if (p.startsWith('/webhook_endpoints/')) return fx.endpointId;
  if (p.startsWith('/api_keys/')) return rng.pick(fx.spareKeyIds);
  if (p.startsWith('/client_tokens/')) return rng.pick(fx.spareClientTokenIds);
  if (p.startsWith('/graphql/documents/')) return rng.pick(fx.spareDocumentIds);
  throw new Error(`no fixture for path parameter ${name} of ${op.operationId}`);
}

/** A request the contract accepts (and, mostly, the services too). */
export function validRequest(contract: Contract, op: OperationSpec, fx: FuzzFixtures, rng: Prng): BaseRequest {
  const req: BaseRequest = { pathParams: {}, query: {}, headers: {} };
  if (!op.isPublic) req.headers.authorization = `Bearer ${op.permission === 'any_key' && rng.bool(0.3) ? fx.pk : fx.sk}`;
  for (const prm of op.params) {
    if (prm.in === 'path') req.pathParams[prm.name] = pathParamValue(op, prm.name, fx, rng);
    else if (prm.in === 'header') {
      if (prm.name.toLowerCase() === 'idempotency-key') req.headers['idempotency-key'] = `fz-${rng.alnum(rng.int(10, 40))}`;
      else if (prm.required || rng.bool(0.2)) req.headers[prm.name.toLowerCase()] = String(prm.example ?? valueFor(contract, prm.schema, prm.name, fx, rng, op));
    } else if (prm.in === 'query' && (prm.required || rng.bool(0.5))) {
      req.query[prm.name] =
        prm.name === 'starting_after' ? rng.pick(fx.paymentIds) : prm.name === 'client_token' ? fx.clientToken : String(valueFor(contract, prm.schema, prm.name, fx, rng, op));
    }
  }
  if (op.body && (op.body.required || rng.bool(0.7))) req.body = bodyFor(contract, op, fx, rng);
  return req;
}

function bodyFor(contract: Contract, op: OperationSpec, fx: FuzzFixtures, rng: Prng): unknown {
  switch (op.operationId) {
    case 'createPaymentIntent': {
      const method = rng.weighted([['multicaixa_express', 6], ['multicaixa_reference', 3], [rng.pick(['card', 'kwik', 'unitel_money']), 1]] as const);
      const body: Record<string, unknown> = { amount: rng.int(100, 200_000), currency: 'AOA', payment_method: method };
      if (method === 'multicaixa_express') body.customer = { mobile: rng.pick(MOBILES) };
      if (rng.bool(0.5)) body.merchant_reference = `order-${rng.alnum(12)}`;
      if (rng.bool(0.4)) body.metadata = { cart: rng.alnum(6), n: String(rng.int(0, 99)) };
      return body;
    }
    case 'createRefund': {
      const body: Record<string, unknown> = { payment_intent: rng.pick(fx.paidPaymentIds) };
      if (rng.bool(0.8)) body.amount = rng.int(1, 300);
      return body;
    }
    case 'simulateReferencePaid':
      return { reference: rng.pick(fx.referenceNumbers) };
    case 'advanceSandboxClock':
      return { seconds: rng.int(1, 600) };
    case 'createQrCode':
      return rng.bool(0.5) ? { payment_link: fx.linkCode } : { amount: rng.int(100, 50_000), ...(rng.bool(0.5) ? { description: 'QR fuzz' } : {}) };
    case 'createWebhookEndpoint':
      // Rare event types only: every endpoint receives every matching event, and hundreds of catch-all
      // endpoints would turn the run into a webhook load test.
      return { url: `${fx.receiverUrl}/fz/${rng.alnum(6)}`, events: [rng.pick(['payment.reconciled', 'checkout.session.completed', 'payment.expired'])], ...(rng.bool(0.5) ? { name: 'fuzz endpoint' } : {}) };
    case 'createPublicPaymentLinkPayment':
    case 'createPublicCheckoutSessionPayment':
      return rng.bool(0.6)
        ? { payment_method: 'multicaixa_express', customer: { mobile: rng.pick(MOBILES) } }
        : { payment_method: 'multicaixa_reference' };
    default:
      if (op.body!.examples.length && rng.bool(0.5)) return structuredClone(rng.pick(op.body!.examples));
      return valueFor(contract, op.body!.schema, '', fx, rng, op);
  }
}

/** A value valid for `schema` (the common JSON Schema keywords the contract uses). */
export function valueFor(contract: Contract, raw: Schema, name: string, fx: FuzzFixtures, rng: Prng, op: OperationSpec, depth = 0): unknown {
  const schema = contract.resolve(raw);
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return rng.pick(schema.enum);
  if (schema.oneOf || schema.anyOf) return valueFor(contract, rng.pick(schema.oneOf ?? schema.anyOf), name, fx, rng, op, depth + 1);
  if (schema.example !== undefined && rng.bool(0.5)) return structuredClone(schema.example);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const required: string[] = schema.required ?? [];
      for (const [key, sub] of Object.entries<Schema>(schema.properties ?? {})) {
        if (required.includes(key) || rng.bool(0.5)) out[key] = valueFor(contract, sub, key, fx, rng, op, depth + 1);
      }
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object' && depth < 3) {
        for (let i = rng.int(0, 3); i > 0; i--) out[`k${rng.alnum(5)}`] = valueFor(contract, schema.additionalProperties, 'value', fx, rng, op, depth + 1);
      }
      // "not both" (QR codes): keep the request on the valid side.
      const notBoth: string[] | undefined = schema.not?.required;
      if (notBoth && notBoth.every((k) => k in out)) delete out[notBoth[0]!];
      for (const [k, deps] of Object.entries<string[]>(schema.dependentRequired ?? {})) {
        if (k in out && deps.some((d) => !(d in out))) delete out[k];
      }
      if (schema.minProperties && Object.keys(out).length < schema.minProperties) {
        const key = required[0] ?? Object.keys(schema.properties ?? {}).find((k) => !(notBoth ?? []).slice(0, 1).includes(k));
        if (key) out[key] = valueFor(contract, schema.properties[key], key, fx, rng, op, depth + 1);
      }
      return out;
    }
    case 'array': {
      const n = Math.max(schema.minItems ?? 0, rng.int(1, 2));
      const items = Array.from({ length: n }, () => valueFor(contract, schema.items ?? {}, name, fx, rng, op, depth + 1));
      return schema.uniqueItems ? [...new Map(items.map((v) => [JSON.stringify(v), v])).values()] : items;
    }
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? 0;
      const max = Math.min(schema.maximum ?? min + 100_000, min + 100_000);
      return rng.int(min, max);
    }
    case 'boolean':
      return rng.bool();
    case 'string':
    default:
      return stringFor(schema, name, fx, rng);
  }
}

function stringFor(schema: Schema, name: string, fx: FuzzFixtures, rng: Prng): string {
  if (schema.pattern === '^9[0-9]{8}$') return rng.pick(MOBILES);
  if (schema.pattern === '^[0-9]{9}$') return rng.pick(fx.referenceNumbers);
  if (schema.format === 'email') return `fz${rng.alnum(6).toLowerCase()}@example.com`;
  if (schema.format === 'uri' || name.endsWith('url')) return `https://shop.example.com/${name}/${rng.alnum(6)}`;
  const min = schema.minLength ?? 1;
  const max = Math.min(schema.maxLength ?? 24, 24);
  return rng.alnum(rng.int(Math.min(min, max), max));
}
