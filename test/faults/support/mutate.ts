import type { Contract, OperationSpec, Schema } from './contract';
import { validRequest, type BaseRequest, type FuzzFixtures } from './generate';
import type { Prng } from './prng';

/** One request as it goes on the wire, with what was done to it. */
export interface WireRequest {
  index: number;
  operationId: string;
  /** Mutation category, e.g. body.wrongType. */
  mutation: string;
  /** What exactly was changed. */
  detail: string;
  method: string;
  /** Path and query, already encoded. */
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** The contract refuses this request: a 2xx answer is a bug. */
  invalid: boolean;
  /** The exact refusal the contract prescribes, when there is only one (status and error code). */
  refusal?: { status: number; code: string };
}

type Path = Array<string | number>;
interface Draft extends BaseRequest {
  /** Overrides the serialized body (raw bytes, broken JSON). */
  rawBody?: Buffer;
  /** Replaces the whole path (and query) when set. */
  rawPath?: string;
  /** Appended to the path before the query. */
  pathSuffix?: string;
  rawQuery?: string;
  method?: string;
  /** Marker strings in `body` replaced by raw text when serialized. */
  raws: Map<string, Buffer>;
}

const HUGE = 100 * 1024;
const ODD_STRINGS: ReadonlyArray<readonly [string, string]> = [
  ['lone high surrogate', 'ab\ud800cd'],
  ['lone low surrogate', '\udc00'],
  ['RTL override', '\u202eevil\u202c'],
  ['RTL mark', '\u200f9\u200f23000000'],
  ['NUL', 'a\u0000b'],
  ['only NUL', '\u0000'],
  ['emoji', '💳🇦🇴👨‍👩‍👧'],
  ['zero width', '\u200b\u200c\u200d\ufeff'],
  ['line separators', 'a\u2028b\u2029c'],
  ['combining marks', 'a' + '\u0301'.repeat(300)],
  ['control chars', '\u0001\u0002\u001b[31m\u007f'],
  ['full-width digits', '９２３０００００００'],
  ['arabic digits', '٩٢٣٠٠٠٠٠٠'],
  ['whitespace only', ' \t\n '],
  ['empty', ''],
  ['html', '<script>alert(1)</script>'],
  ['regex', '.*'],
  ['mongo dollar', '$where'],
  ['path traversal', '../../etc/passwd'],
  ['percent', '%00%2e%2e'],
];
const INVALID_UTF8: ReadonlyArray<readonly [string, number[]]> = [
  ['overlong slash', [0xc0, 0xaf]],
  ['overlong NUL', [0xc0, 0x80]],
  ['0xFF byte', [0xff]],
  ['truncated 3-byte', [0xe2, 0x82]],
  ['encoded surrogate', [0xed, 0xa0, 0x80]],
  ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
];
const WRONG_TYPES: unknown[] = [0, -1, 1.5, 'text', '', true, false, null, [], {}, [1, 'a'], { a: 1 }, '100', 'null', 'true'];

export function buildRequest(index: number, contract: Contract, op: OperationSpec, fx: FuzzFixtures, rng: Prng): WireRequest {
  loadResolve = (schema) => contract.resolve(schema);
  const draft: Draft = { ...validRequest(contract, op, fx, rng), raws: new Map() };
  const applicable = MUTATIONS.filter(([, m]) => m.applies(op, draft));
  const [name, mutation] = rng.weighted(applicable.map((entry) => [entry, entry[1].weight] as const));
  const { detail, invalid, refusal } = mutation.apply(draft, { op, contract, fx, rng });
  return { ...serialize(index, op, name, detail, invalid, draft), ...(refusal ? { refusal } : {}) };
}

interface Ctx {
  op: OperationSpec;
  contract: Contract;
  fx: FuzzFixtures;
  rng: Prng;
}
interface Mutation {
  weight: number;
  applies(op: OperationSpec, d: Draft): boolean;
  apply(d: Draft, ctx: Ctx): { detail: string; invalid: boolean; refusal?: WireRequest['refusal'] };
}

const hasBody = (op: OperationSpec) => !!op.body;
const bodyWithFields = (op: OperationSpec, d: Draft) => !!op.body && leafPaths(d.body).length > 0;
const authenticated = (op: OperationSpec) => !op.isPublic;

const MUTATIONS: Array<[string, Mutation]> = [
  ['none', { weight: 0.6, applies: () => true, apply: () => ({ detail: 'valid request', invalid: false }) }],
  [
    'body.wrongType',
    {
      weight: 3,
      applies: bodyWithFields,
      apply(d, { rng, op, contract }) {
        const path = rng.pick(leafPaths(d.body));
        const current = getAt(d.body, path);
        const candidates = WRONG_TYPES.filter((v) => jsonType(v) !== jsonType(current));
        const value = rng.pick(candidates);
        setAt(d.body, path, structuredClone(value));
        // A string where a string map is allowed (metadata values) stays valid; so does any value the schema accepts.
        const invalid = !schemaAccepts(contract, op.body!.schema, path, value);
        return { detail: `${fmt(path)} = ${JSON.stringify(value)}`, invalid };
      },
    },
  ],
  [
    'body.missingRequired',
    {
      weight: 2,
      applies: (op, d) => !!op.body && requiredPaths(op, d).length > 0,
      apply(d, { rng, op }) {
        const path = rng.pick(requiredPaths(op, d));
        deleteAt(d.body, path);
        return { detail: `without ${fmt(path)}`, invalid: true };
      },
    },
  ],
  [
    'body.extraField',
    {
      weight: 2,
      applies: (op, d) => !!op.body && isObject(d.body),
      apply(d, { rng }) {
        const targets = objectPaths(d.body).filter((p) => p[0] !== 'metadata');
        const path = rng.pick(targets);
        const name = rng.pick(['extra', 'Amount', 'amount ', '', ' ', 'a.b', '$where', '$gt', 'id', 'status', 'account_id', '_id', 'livemode', 'x'.repeat(1000), 'ключ', '💳']);
        const value = rng.pick<unknown>(['x', 1, null, true, { $ne: null }, ['a']]);
        const obj = getAt(d.body, path) as Record<string, unknown>;
        if (name in obj) return { detail: `field ${JSON.stringify(name)} already there`, invalid: false };
        obj[name] = value;
        return { detail: `${fmt([...path, name])} = ${JSON.stringify(value)}`, invalid: true };
      },
    },
  ],
  [
    'body.outOfRange',
    {
      weight: 3,
      applies: (op, d) => !!op.body && rangedPaths(op, d).length > 0,
      apply(d, ctx) {
        const { rng } = ctx;
        const [path, schema] = rng.pick(rangedPaths(ctx.op, d));
        if (schema.type === 'integer' || schema.type === 'number') {
          const raw = rng.pick([
            ...(schema.minimum !== undefined ? [String(schema.minimum - 1)] : []),
            ...(schema.maximum !== undefined ? [String(schema.maximum + 1)] : []),
            '0', '-1', '-0', '2147483648', '9007199254740993', '1e308', '1e400', '-1e400', '1.5', '100.5', '1e-7', '-9007199254740993',
          ]);
          // -0 and 1e-7 … are out of range only where the schema says so; 1e400 parses as Infinity. A
          // fraction is refused by an integer schema only: a `number` (a chaos probability) takes 1e-7.
          const n = Number(raw);
          const invalid = (schema.type === 'integer' && !Number.isInteger(n)) || !Number.isFinite(n) || (schema.minimum !== undefined && n < schema.minimum) || (schema.maximum !== undefined && n > schema.maximum);
          setRaw(d, path, raw);
          return { detail: `${fmt(path)} = ${raw}`, invalid };
        }
        if (schema.type === 'string') {
          const over = schema.maxLength !== undefined && (schema.minLength === undefined || rng.bool());
          const len = over ? schema.maxLength + 1 : Math.max(0, (schema.minLength ?? 1) - 1);
          setAt(d.body, path, 'x'.repeat(len));
          return { detail: `${fmt(path)} has ${len} chars`, invalid: true };
        }
        // arrays: empty, duplicates, or very long
        const current = getAt(d.body, path) as unknown[];
        const choice = rng.pick(['empty', 'duplicates', 'long']);
        const value = choice === 'empty' ? [] : choice === 'duplicates' ? [current[0], current[0]] : Array.from({ length: 2000 }, () => current[0]);
        setAt(d.body, path, value);
        return { detail: `${fmt(path)}: ${choice} array`, invalid: true };
      },
    },
  ],
  [
    'body.hugeString',
    {
      weight: 1.5,
      applies: (op, d) => !!op.body && stringPaths(d.body).length > 0,
      apply(d, { rng }) {
        const path = rng.pick(stringPaths(d.body));
        const size = rng.pick([HUGE, HUGE, 60 * 1024, 20 * 1024]);
        setAt(d.body, path, rng.pick(['a', 'é', '💳']).repeat(Math.ceil(size / 4)).slice(0, size));
        // Above the 64 KiB body limit: 413; below it every string field of the contract has a maxLength
        // of at most 2048 or a pattern, except metadata keys' values (500) — so it is invalid either way.
        return { detail: `${fmt(path)} is a ${Math.round(size / 1024)} KB string`, invalid: true };
      },
    },
  ],
  [
    'body.oddString',
    {
      weight: 2.5,
      applies: (op, d) => !!op.body && stringPaths(d.body).length > 0,
      apply(d, { rng }) {
        const path = rng.pick(stringPaths(d.body));
        if (rng.bool(0.3)) {
          const [label, bytes] = rng.pick(INVALID_UTF8);
          const marker = markerFor(d, Buffer.concat([Buffer.from('"x'), Buffer.from(bytes), Buffer.from('y"')]));
          setAt(d.body, path, marker);
          return { detail: `${fmt(path)} holds invalid UTF-8 (${label})`, invalid: false };
        }
        const [label, value] = rng.pick(ODD_STRINGS);
        setAt(d.body, path, value);
        return { detail: `${fmt(path)} = ${label} ${JSON.stringify(value).slice(0, 60)}`, invalid: false };
      },
    },
  ],
  [
    'body.operatorInjection',
    {
      weight: 1,
      applies: (op, d) => !!op.body && stringPaths(d.body).length > 0,
      apply(d, { rng }) {
        const path = rng.pick(stringPaths(d.body));
        const value = rng.pick<unknown>([{ $ne: null }, { $gt: '' }, { $regex: '.*' }, { $where: 'sleep(1000)' }, ['$ne', null]]);
        setAt(d.body, path, value);
        return { detail: `${fmt(path)} = ${JSON.stringify(value)}`, invalid: true };
      },
    },
  ],
  [
    'body.protoKey',
    {
      weight: 1.5,
      applies: hasBody,
      apply(d, { rng }) {
        const raw = rng.pick([
          '{"__proto__":{"admin":true}}',
          '{"__proto__":null}',
          '{"constructor":{"prototype":{"polluted":1}}}',
          '{"constructor":"x"}',
          '{"__proto__":{"amount":1}}',
        ]);
        if (!isObject(d.body)) d.body = {};
        const inner = raw.slice(1, -1);
        const where = rng.pick(objectPaths(d.body));
        const obj = getAt(d.body, where) as Record<string, unknown>;
        const marker = `__FZPROTO_${d.raws.size}__`;
        obj[marker] = 1;
        d.raws.set(`"${marker}":1`, Buffer.from(inner));
        return { detail: `${raw} inside ${fmt(where) || 'the body'}`, invalid: true };
      },
    },
  ],
  [
    'body.deepNesting',
    {
      weight: 1.5,
      applies: hasBody,
      apply(d, { rng }) {
        const depth = rng.pick([1_000, 10_000, 10_000, 30_000]);
        const kind = depth > 12_000 ? 'array' : rng.pick(['array', 'object']);
        const raw = kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
        const paths = isObject(d.body) ? leafPaths(d.body) : [];
        if (paths.length && rng.bool(0.6)) {
          const path = rng.pick(paths);
          setRaw(d, path, raw);
          return { detail: `${fmt(path)} nested ${depth} levels (${kind})`, invalid: true };
        }
        d.rawBody = Buffer.from(raw);
        return { detail: `whole body nested ${depth} levels (${kind})`, invalid: true };
      },
    },
  ],
  [
    'body.shape',
    {
      weight: 1,
      applies: hasBody,
      apply(d, { rng }) {
        const raw = rng.pick(['[]', '[{}]', 'null', '"text"', '123', 'true', `[${JSON.stringify(d.body ?? {})}]`]);
        d.rawBody = Buffer.from(raw);
        return { detail: `body is ${raw.slice(0, 60)}`, invalid: true };
      },
    },
  ],
  [
    'body.badJson',
    {
      weight: 2.5,
      applies: hasBody,
      apply(d, { rng }) {
        const text = JSON.stringify(d.body ?? { a: 1 });
        const variants: Array<[string, string]> = [
          ['truncated', text.slice(0, rng.int(1, Math.max(1, text.length - 1)))],
          ['trailing comma', text.replace(/}$/, ',}')],
          ['BOM prefix', '\ufeff' + text],
          ['single quotes', text.replace(/"/g, "'")],
          ['unquoted keys', text.replace(/"([a-z_]+)":/g, '$1:')],
          ['NaN', '{"amount":NaN}'],
          ['comment', '/* c */' + text],
          ['trailing garbage', text + ' x'],
          ['two documents', text + text],
          ['whitespace only', '   \n'],
          ['NUL byte', '\u0000'],
          ['unterminated string', '{"a":"abc'],
          ['lone surrogate escape', '{"description":"\\ud800"}'],
          ['bad escape', '{"a":"\\x41"}'],
          ['hex number', '{"amount":0x10}'],
          ['undefined', 'undefined'],
        ];
        const [label, raw] = rng.pick(variants);
        d.rawBody = Buffer.from(raw);
        // Some variants of a small body stay valid JSON (`{}` has no key to unquote, a truncated
        // number is a number): only what JSON.parse refuses must be refused.
        let invalid = true;
        try {
          JSON.parse(raw);
          invalid = false;
        } catch {
          // not JSON: the gateway must say so
        }
        return { detail: `${label}: ${raw.slice(0, 80)}`, invalid };
      },
    },
  ],
  [
    'body.unexpected',
    {
      weight: 0.5,
      applies: (op) => !op.body && op.method !== 'GET',
      apply(d, { rng, op }) {
        d.rawBody = Buffer.from(rng.pick(['{"a":1}', '[1]', 'not json', '{"__proto__":{}}', 'x'.repeat(HUGE)]));
        d.headers['content-type'] = 'application/json';
        // DELETE bodies have no meaning in HTTP and are ignored; POST ones are refused.
        return { detail: `a body on an operation without one (${d.rawBody.length} bytes)`, invalid: op.method === 'POST' };
      },
    },
  ],
  [
    'header.idempotencyKey',
    {
      weight: 1.5,
      applies: (op) => op.params.some((p) => p.name === 'Idempotency-Key'),
      apply(d, { rng }) {
        const [label, value] = rng.pick<[string, string | string[] | undefined]>([
          ['missing', undefined],
          ['empty', ''],
          ['7 chars', 'abcdefg'],
          ['129 chars', 'k'.repeat(129)],
          ['4000 chars', 'k'.repeat(4000)],
          ['8 spaces', ' '.repeat(8)],
          ['latin-1 bytes', 'ÿ'.repeat(12)],
          ['two headers', ['dup-key-aaaaaaaa', 'dup-key-bbbbbbbb']],
        ]);
        if (value === undefined) delete d.headers['idempotency-key'];
        else (d.headers as Record<string, string | string[]>)['idempotency-key'] = value;
        // Two headers are joined by a comma into one value of valid length; 8 spaces may be trimmed away.
        const invalid = label !== 'two headers' && label !== 'latin-1 bytes' && label !== '8 spaces';
        return { detail: `Idempotency-Key ${label}`, invalid };
      },
    },
  ],
  [
    'header.idempotencyReuse',
    {
      weight: 1,
      applies: (op) => op.params.some((p) => p.name === 'Idempotency-Key'),
      apply(d, { rng }) {
        // A small pool of keys shared by concurrent requests with different bodies: replays and 409s race.
        d.headers['idempotency-key'] = `fz-shared-${rng.int(0, 15)}`;
        return { detail: `shared Idempotency-Key ${d.headers['idempotency-key']}`, invalid: false };
      },
    },
  ],
  [
    'header.contentType',
    {
      weight: 1.5,
      applies: (op, d) => !!op.body && d.body !== undefined,
      apply(d, { rng }) {
        const value = rng.pick([undefined, '', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/json-patch+json', '*/*', 'application/json, text/plain', 'application/json; charset=utf-16', 'APPLICATION/JSON', 'application/json;;;', 'application/json; charset=latin1']);
        if (value === undefined) delete d.headers['content-type'];
        else d.headers['content-type'] = value;
        const norm = String(value ?? '').split(';')[0]!.trim().toLowerCase();
        return { detail: `Content-Type ${JSON.stringify(value)}`, invalid: norm !== 'application/json' };
      },
    },
  ],
  [
    'header.authorization',
    {
      weight: 2.5,
      applies: authenticated,
      apply(d, { rng, fx, op }) {
        const [label, value, invalid] = rng.pick<[string, string | string[] | undefined, boolean]>([
          ['missing', undefined, true],
          ['Bearer only', 'Bearer', true],
          ['Bearer and space', 'Bearer ', true],
          ['lower-case scheme', `bearer ${fx.sk}`, false],
          ['Basic', `Basic ${Buffer.from(`${fx.sk}:`).toString('base64')}`, true],
          ['no scheme', fx.sk, true],
          ['live key', 'Bearer sk_live_' + 'a'.repeat(32), true],
          ['unknown test key', 'Bearer sk_test_' + 'Z'.repeat(32), true],
          ['truncated key', `Bearer ${fx.sk.slice(0, -1)}`, true],
          ['key with suffix', `Bearer ${fx.sk}x`, true],
          ['key and junk', `Bearer ${fx.sk} junk`, true],
          ['publishable key', `Bearer ${fx.pk}`, op.permission !== 'any_key'],
          // Holds every `<resource>:read` (fixtures.ts): openapi.yaml's x-permission decides, not the method
          // (DELETE /v1/client_tokens/{id} needs payment_intents:read).
          ['read-only restricted key', `Bearer ${fx.readOnlyKey}`, !(op.permission === 'any_key' || /:read$/.test(op.permission ?? ''))],
          ['revoked key', `Bearer ${fx.revokedKey}`, true],
          ['8 KB token', 'Bearer ' + 'a'.repeat(8000), true],
          ['latin-1 token', 'Bearer sk_test_ÿÿÿÿ', true],
          ['two headers', [`Bearer ${fx.sk}`, 'Bearer sk_test_other'], false],
          ['tab separated', `Bearer\t${fx.sk}`, false],
        ]);
        if (value === undefined) delete d.headers.authorization;
        else (d.headers as Record<string, string | string[]>).authorization = value;
        return { detail: `Authorization ${label}`, invalid };
      },
    },
  ],
  [
    'header.lastEventId',
    {
      weight: 1,
      applies: (op) => op.params.some((p) => p.name === 'Last-Event-ID'),
      apply(d, { rng }) {
        const value = rng.pick(['', 'evt_' + 'x'.repeat(24), 'k'.repeat(129), 'k'.repeat(5000), '../../', '{"$gt":""}', 'ÿÿ']);
        d.headers['last-event-id'] = value;
        return { detail: `Last-Event-ID of ${value.length} chars`, invalid: value.length > 128 };
      },
    },
  ],
  [
    'header.junk',
    {
      weight: 0.7,
      applies: () => true,
      apply(d, { rng }) {
        const [name, value] = rng.pick<[string, string]>([
          ['x-forwarded-for', '1.2.3.4, <script>, ::1'],
          ['accept', 'text/html;q=0.1, */*;q=garbage'],
          ['accept-encoding', 'gzip, br, zstd, ' + 'x'.repeat(2000)],
          ['origin', 'null'],
          ['cookie', 'a='.repeat(2000)],
          ['x-request-id', 'req_injected'],
          ['request-id', '../../etc'],
          ['x-http-method-override', 'DELETE'],
          ['expect', '100-continue'],
          ['range', 'bytes=0-1'],
        ]);
        d.headers[name] = value;
        return { detail: `${name}: ${value.slice(0, 40)}`, invalid: false };
      },
    },
  ],
  [
    'path.param',
    {
      weight: 3,
      applies: (op) => op.params.some((p) => p.in === 'path'),
      apply(d, { rng, fx, op }) {
        const names = Object.keys(d.pathParams);
        const name = rng.pick(names);
        const [label, value] = rng.pick<[string, string]>([
          ['10 000 chars', 'pay_' + 'A'.repeat(10_000)],
          ['dot dot slash', '..%2F..%2Fhealthz'],
          ['raw dot dot', '..'],
          ['single dot', '.'],
          ['NUL', '%00'],
          ['id then NUL', `${d.pathParams[name]}%00`],
          ['malformed percent', '%E0%A4%A'],
          ['lone percent', '%'],
          ['bad percent', '%zz'],
          ['overlong encoding', '%C0%AF'],
          ['encoded surrogate', '%ED%A0%80'],
          ['emoji', encodeURIComponent('💳')],
          ['space', '%20'],
          ['encoded slash', `a%2Fb`],
          ['operator', encodeURIComponent('{"$gt":""}')],
          ['proto', '__proto__'],
          ['constructor', 'constructor'],
          ['toString', 'toString'],
          ['wrong prefix', 'rf_' + 'A'.repeat(24)],
          ['unknown id', 'pay_' + 'Z'.repeat(24)],
          ['another account', rng.pick(fx.foreignIds)],
          ['upper-cased id', (d.pathParams[name] ?? '').toUpperCase()],
          ['regex', encodeURIComponent('.*')],
        ]);
        d.pathParams[name] = `\u0000raw:${value}`;
        // Public routes are reached by code or id alone, whatever the account.
        return { detail: `{${name}} = ${label}`, invalid: !(label === 'another account' && op.isPublic) };
      },
    },
  ],
  [
    'path.shape',
    {
      weight: 1,
      applies: () => true,
      apply(d, { rng }) {
        const [label, suffix, invalid] = rng.pick<[string, string, boolean]>([
          ['trailing slash', '/', false],
          ['double slash', '//', true],
          ['dot dot', '/..', true],
          ['NUL', '%00', true],
          ['extension', '.json', true],
          ['semicolon', ';x=1', true],
          ['extra segment', '/extra', true],
          ['encoded space', '%20', true],
        ]);
        d.pathSuffix = suffix;
        return { detail: `path + ${JSON.stringify(suffix)} (${label})`, invalid };
      },
    },
  ],
  [
    'query.param',
    {
      weight: 2,
      applies: () => true,
      apply(d, { rng, op }) {
        const declared = op.params.filter((p) => p.in === 'query');
        if (declared.length && rng.bool(0.75)) {
          const prm = rng.pick(declared);
          const [value, invalid] = rng.pick<[string, boolean]>(
            prm.schema.type === 'integer'
              ? [['0', true], ['-1', true], [String((prm.schema.maximum ?? 100) + 1), true], ['abc', true], ['1.5', true], ['', true], ['Infinity', true], ['99999999999999999999', true], ['%00', true], ['1&limit=2', true], ['05', false],
                  // Spellings Number() reads but the contract refuses (plain decimal digits only): never coerced.
                  ['1e2', true], ['1E1', true], ['0x10', true], ['0b11', true], ['0o7', true], ['%2B5', true], ['+5', true], ['5.0', true], ['%205', true], ['%20%201', true], ['5%20', true], ['%EF%BC%95', true]]
              : [['bogus', prm.name === 'status'], ['', true], ['x'.repeat(129), true], ['%00', false], [encodeURIComponent('{"$gt":""}'), prm.name === 'status'], ['succeeded', prm.name === 'status'], [`${'a'.repeat(40)}%ff`, prm.name === 'status']],
          );
          d.rawQuery = `${encodeURIComponent(prm.name)}=${value}`;
          // `+5` unencoded is " 5" once decoded (a `+` in a query is a space); `05` is plain digits.
          // A refused integer on an otherwise valid request is exactly 400 invalid_request.
          const refusal = invalid && prm.schema.type === 'integer' ? { status: 400, code: 'invalid_request' } : undefined;
          return { detail: `${prm.name}=${value.slice(0, 60)}`, invalid, refusal };
        }
        const raw = rng.pick(['__proto__=1', 'constructor=x', 'limit[]=1', 'limit[$gt]=1', 'a=%E0%A4%A', 'x=' + 'y'.repeat(6000), '%00=%00', '&&&', '=1', 'unknown=1']);
        d.rawQuery = raw;
        return { detail: `query ${raw.slice(0, 60)}`, invalid: false };
      },
    },
  ],
  [
    'method.wrong',
    {
      weight: 1,
      applies: () => true,
      apply(d, { rng, op }) {
        const method = rng.pick(['PUT', 'PATCH', 'POST', 'DELETE', 'GET'].filter((m) => m !== op.method));
        d.method = method;
        // Another operation may live at the same path with that method: then it is not invalid.
        return { detail: `${method} instead of ${op.method}`, invalid: false };
      },
    },
  ],
];

function serialize(index: number, op: OperationSpec, mutation: string, detail: string, invalid: boolean, d: Draft): WireRequest {
  let path = op.prefix + op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = d.pathParams[name] ?? '';
    return v.startsWith('\u0000raw:') ? v.slice(5) : encodeURIComponent(v);
  });
  path += d.pathSuffix ?? '';
  const query = d.rawQuery ?? new URLSearchParams(d.query).toString();
  if (query) path += `?${query}`;
  const headers: Record<string, string | string[]> = { ...d.headers };
  let body: Buffer | undefined = d.rawBody;
  if (!body && d.body !== undefined) {
    let text = JSON.stringify(d.body);
    const parts: Buffer[] = [];
    // Replace markers (quoted strings, or `"key":1` pairs) by their raw bytes.
    const markers = [...d.raws.keys()];
    if (markers.length) {
      const re = new RegExp(markers.map((m) => (m.startsWith('"') ? escapeRe(m) : escapeRe(JSON.stringify(m)))).join('|'), 'g');
      let last = 0;
      for (const m of text.matchAll(re)) {
        parts.push(Buffer.from(text.slice(last, m.index)));
        const key = m[0].startsWith('"__FZPROTO') ? m[0] : JSON.parse(m[0]);
        parts.push(d.raws.get(key)!);
        last = m.index! + m[0].length;
      }
      parts.push(Buffer.from(text.slice(last)));
      body = Buffer.concat(parts);
      text = '';
    } else {
      body = Buffer.from(text);
    }
  }
  if (body && !('content-type' in headers) && mutation !== 'header.contentType') headers['content-type'] = 'application/json';
  return { index, operationId: op.operationId, mutation, detail, method: d.method ?? op.method, path, headers, body, invalid };
}

// ---- helpers over the body tree -------------------------------------------------------------------

function markerFor(d: Draft, raw: Buffer): string {
  const marker = `__FZRAW_${d.raws.size}__`;
  d.raws.set(marker, raw);
  return marker;
}

/** Puts raw JSON text (e.g. a number JSON.stringify cannot write) at `path`. */
function setRaw(d: Draft, path: Path, raw: string): void {
  setAt(d.body, path, markerFor(d, Buffer.from(raw)));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const fmt = (path: Path) => path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.');

function walk(value: unknown, path: Path, visit: (v: unknown, p: Path) => void): void {
  visit(value, path);
  if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...path, i], visit));
  else if (isObject(value)) for (const [k, v] of Object.entries(value)) walk(v, [...path, k], visit);
}

function leafPaths(body: unknown): Path[] {
  const out: Path[] = [];
  walk(body, [], (_v, p) => p.length > 0 && out.push(p));
  return out;
}

function stringPaths(body: unknown): Path[] {
  const out: Path[] = [];
  walk(body, [], (v, p) => typeof v === 'string' && p.length > 0 && out.push(p));
  return out;
}

function objectPaths(body: unknown): Path[] {
  const out: Path[] = [];
  walk(body, [], (v, p) => isObject(v) && out.push(p));
  return out;
}

function getAt(root: unknown, path: Path): unknown {
  return path.reduce<unknown>((o, k) => (o as any)?.[k], root);
}

function setAt(root: unknown, path: Path, value: unknown): void {
  const parent = getAt(root, path.slice(0, -1)) as any;
  parent[path[path.length - 1]!] = value;
}

function deleteAt(root: unknown, path: Path): void {
  const parent = getAt(root, path.slice(0, -1)) as any;
  const key = path[path.length - 1]!;
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
}

/** The sub-schema at `path` of the body schema (following properties, items, additionalProperties). */
function schemaAt(contract: Contract, root: Schema, path: Path): Schema | undefined {
  let s: Schema | undefined = contract.resolve(root);
  for (const k of path) {
    if (!s) return undefined;
    if (typeof k === 'number') s = s.items ? contract.resolve(s.items) : undefined;
    else s = s.properties?.[k] ? contract.resolve(s.properties[k]) : typeof s.additionalProperties === 'object' ? contract.resolve(s.additionalProperties) : undefined;
  }
  return s;
}

function schemaAccepts(contract: Contract, root: Schema, path: Path, value: unknown): boolean {
  const s = schemaAt(contract, root, path);
  if (!s) return false;
  const type = jsonType(value);
  if (s.oneOf || s.anyOf) return (s.oneOf ?? s.anyOf).some((alt: Schema) => typeOk(contract.resolve(alt), type, value));
  return typeOk(s, type, value);
}

function typeOk(s: Schema, type: string, value: unknown): boolean {
  if (s.const !== undefined) return s.const === value;
  if (s.enum) return s.enum.includes(value);
  if (s.type === 'string') return type === 'string' && (s.minLength ?? 0) <= String(value).length && !s.pattern && !s.format;
  if (s.type === 'integer') return type === 'integer';
  // A `number` (a chaos probability) takes an integer too, within its range.
  if (s.type === 'number') {
    return (type === 'integer' || type === 'number') && (s.minimum === undefined || (value as number) >= s.minimum) && (s.maximum === undefined || (value as number) <= s.maximum);
  }
  return false;
}

function requiredPaths(op: OperationSpec, d: Draft): Path[] {
  if (!isObject(d.body)) return [];
  const out: Path[] = [];
  const visit = (schema: Schema, value: unknown, path: Path) => {
    if (!isObject(value)) return;
    for (const key of schema.required ?? []) if (key in value) out.push([...path, key]);
    for (const [key, sub] of Object.entries<Schema>(schema.properties ?? {})) {
      if (key in value) visit(loadResolve(sub), value[key], [...path, key]);
    }
  };
  visit(op.body!.schema, d.body, []);
  return out;
}

/** Resolves $refs through the contract of the request being built (set by buildRequest). */
let loadResolve: (s: Schema) => Schema = (s) => s;

function rangedPaths(op: OperationSpec, d: Draft): Array<[Path, Schema]> {
  const out: Array<[Path, Schema]> = [];
  walk(d.body, [], (_v, p) => {
    if (!p.length) return;
    const s = schemaAt({ resolve: loadResolve } as Contract, op.body!.schema, p);
    if (!s) return;
    const ranged = s.minimum !== undefined || s.maximum !== undefined || s.minLength !== undefined || s.maxLength !== undefined || s.minItems !== undefined;
    if (ranged) out.push([p, s]);
  });
  return out;
}
