import type { Prng } from '../faults/support/prng';

/**
 * The shapes a secret is planted in for the log redaction property test (logRedactionProperty.test.ts):
 * each makes one request, REST or GraphQL, that carries fresh secrets (drawn from a seeded PRNG) in
 * its body, GraphQL variables or document, path or query string, and an ordinary value that the log
 * must keep.
 */
export interface Plant {
  shape: string;
  method: 'GET' | 'POST';
  /** From the root: `/v1/…` or `/graphql`. */
  path: string;
  /** Sent as-is with `Content-Type: application/json`. */
  body?: string;
  /** Texts that must appear nowhere in the logs: secrets' random parts, card numbers as sent and as digits. */
  secrets: string[];
  /** Texts the log must still show (its request body), so that a redaction eating everything fails too. */
  kept: string[];
  /** Where the secret is: only the path is stored of a GET. */
  storedIn: 'body' | 'path' | 'query';
}

/** Draws the secrets and names of one plant. */
export class SecretMaker {
  readonly secrets: string[] = [];
  readonly kept: string[] = [];

  constructor(private readonly prng: Prng) {}

  /** A random part no other text holds: what is looked for in the logs. */
  private core(length = 24): string {
    const core = this.prng.alnum(length);
    this.secrets.push(core);
    return core;
  }

  /** A value only its key's name tells apart as a secret. */
  password(): string {
    return `pw${this.core()}`;
  }

  key(): string {
    return `${this.prng.pick(['sk_test_', 'sk_live_', 'pk_test_', 'pk_live_', 'ct_test_'])}${this.core()}`;
  }

  /** A webhook secret, base64 as the Standard Webhooks secrets are (`+`, `/` and `=` in it). */
  whsec(): string {
    const core = this.core(20);
    const tail = `${this.prng.pick(['+', '/', ''])}${this.prng.alnum(6)}==`;
    this.secrets.push(tail.slice(0, -2));
    return `whsec_${core}${tail}`;
  }

  /** Any of the shaped secrets. */
  shaped(): string {
    return this.prng.bool(0.7) ? this.key() : this.whsec();
  }

  /** A Luhn-valid card number of 13 to 19 digits, recorded as digits; returned as digits. */
  card(): string {
    const length = this.prng.pick([13, 15, 16, 16, 16, 19]);
    let digits = this.prng.pick(['4', '5', '37', '6011']);
    while (digits.length < length - 1) digits += String(this.prng.int(0, 9));
    digits += luhnCheckDigit(digits);
    this.secrets.push(digits);
    return digits;
  }

  /** The card grouped by fours with spaces or dashes, recorded as sent too. */
  groupedCard(): string {
    const separator = this.prng.pick([' ', '-']);
    const grouped = this.card().replace(/(\d{4})(?=\d)/g, `$1${separator}`);
    this.secrets.push(grouped);
    return grouped;
  }

  /** A secret's name as people write it: any case, `_`, `-` or a space between its words, maybe one after. */
  secretName(opts: { graphql?: boolean } = {}): string {
    const words = this.prng.pick([['password'], ['secret'], ['token'], ['api', 'key'], ['client', 'secret'], ['authorization'], ['card', 'number'], ['cvv'], ['passphrase'], ['private', 'key'], ['access', 'token'], ['webhook', 'secret']]);
    const separators = opts.graphql ? ['_', ''] : ['_', '-', ' ', ''];
    const joined = words.join(this.prng.pick(separators));
    const cased = this.prng.pick([joined, joined.toUpperCase(), joined[0]!.toUpperCase() + joined.slice(1), [...joined].map((c) => (this.prng.bool() ? c.toUpperCase() : c)).join('')]);
    return cased + this.prng.pick(opts.graphql ? ['', '', '_'] : ['', '', '_', '-', ' ']);
  }

  /** An ordinary value the log must keep. */
  keep(): string {
    const value = `keep${this.prng.alnum(12)}`;
    this.kept.push(value);
    return value;
  }
}

/** The digit that makes `payload` + it pass the Luhn check. */
function luhnCheckDigit(payload: string): string {
  return '0123456789'.split('').find((d) => luhnValid(payload + d))!;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = Number(digits[i]);
    if (double) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

type Draw = (s: SecretMaker) => Omit<Plant, 'shape' | 'secrets' | 'kept'>;

const json = (value: unknown) => JSON.stringify(value);
const rest = (body: string): ReturnType<Draw> => ({ method: 'POST', path: '/v1/webhook_endpoints', body, storedIn: 'body' });
/** Echoed back in the answer's metadata: the response body holds the secret too. */
const echoed = (note: string, s: SecretMaker): ReturnType<Draw> => ({
  method: 'POST',
  path: '/v1/payment_intents',
  body: json({ amount: 1500, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' }, metadata: { note, memo: s.keep() } }),
  storedIn: 'body',
});
const graphql = (query: string, variables?: unknown, extra = ''): ReturnType<Draw> => ({
  method: 'POST',
  path: '/graphql',
  body: `{"query":${json(query)}${variables === undefined ? '' : `,"variables":${typeof variables === 'string' ? variables : json(variables)}`}${extra}}`,
  storedIn: 'body',
});
const get = (path: string, storedIn: Plant['storedIn'] = 'path'): ReturnType<Draw> => ({ method: 'GET', path, storedIn });

/** At least 30 shapes: every way the issue found a secret getting past the redaction, and their neighbours. */
export const SHAPES: Record<string, Draw> = {
  'secret-named key': (s) => rest(json({ [s.secretName()]: s.password(), memo: s.keep() })),
  'secret-named key, trailing `_`': (s) => rest(json({ [`${s.secretName()}_`]: s.password(), memo: s.keep() })),
  'secret-named key, trailing `-`': (s) => rest(json({ [`${s.secretName()}-`]: s.password(), memo: s.keep() })),
  'secret-named key, trailing space': (s) => rest(json({ [`${s.secretName()} `]: s.password(), memo: s.keep() })),
  'secret-named key, mixed case': (s) => rest(json({ pAsSwOrD: s.password(), Client_SECRET: s.password(), memo: s.keep() })),
  'array under a secret-named key, every element': (s) => rest(json({ [s.secretName()]: [s.password(), s.password(), s.password()], memo: s.keep() })),
  'object under a secret-named key': (s) => rest(json({ [s.secretName()]: { inner: s.password(), deeper: { list: [s.password()] } }, memo: s.keep() })),
  'secret deep in arrays of objects': (s) => rest(json({ data: [{ a: 1 }, { b: [{ [s.secretName()]: s.password() }] }], memo: s.keep() })),
  'number under a secret-named key': (s) => rest(`{"${s.secretName()}": ${s.card()}, "memo": "${s.keep()}"}`),
  'bare token in malformed JSON (shell quoting)': (s) => rest(`{"${s.secretName()}": ${s.shaped()}, "memo": "${s.keep()}"}`),
  'bare words under a secret-named key, unterminated': (s) => rest(`{"memo": "${s.keep()}", "${s.secretName()}": correct ${s.password()} staple`),
  'form text sent as JSON': (s) => rest(`${s.secretName().replace(/ /g, '_')}=${s.password()}&memo=${s.keep()}`),
  'single-quoted pseudo-JSON': (s) => rest(`{'${s.secretName()}': '${s.password()}', 'memo': '${s.keep()}'}`),
  'unquoted key': (s) => rest(`{${s.secretName().replace(/[ -]/g, '_')}: "${s.password()}", memo: "${s.keep()}"}`),
  'shaped secret inside a string': (s) => rest(json({ note: `please use ${s.shaped()} for this`, memo: s.keep() })),
  'shaped secret glued to a word': (s) => rest(json({ note: `x9${s.shaped()}`, memo: s.keep() })),
  'Bearer%20 and a key, url-encoded': (s) => rest(json({ header: `Bearer%20${s.key()}`, memo: s.keep() })),
  'key with its underscores url-encoded': (s) => rest(json({ note: s.key().replace(/_/g, '%5F'), memo: s.keep() })),
  'key behind a \\u escape': (s) => rest(`{"note": "${s.key().replace(/^(.)/, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)}", "memo": "${s.keep()}"}`),
  'secret-named key behind a \\u escape': (s) => rest(`{"pass\\u0077ord": "${s.password()}", "memo": "${s.keep()}"}`),
  'secret as a key name': (s) => rest(json({ [s.shaped()]: 1, memo: s.keep() })),
  'card number in a string, grouped': (s) => rest(json({ note: `card ${s.groupedCard()} thanks`, memo: s.keep() })),
  'card number glued to letters': (s) => rest(json({ ref: `order${s.card()}x`, memo: s.keep() })),
  'card number as a JSON number': (s) => rest(`{"ref": ${s.card()}, "memo": "${s.keep()}"}`),
  'name: value in free text': (s) => rest(json({ note: `my ${s.secretName()}: ${s.password()}, thanks`, memo: s.keep() })),
  'secret echoed in the answer (metadata)': (s) => echoed(`${s.shaped()} ${s.groupedCard()}`, s),
  'key in the path': (s) => get(`/v1/payment_intents/${s.key()}`),
  'glued key in the path': (s) => get(`/v1/payment_intents/pi_${s.key()}`),
  'url-encoded key in the path': (s) => get(`/v1/payment_intents/Bearer%20${s.key().replace(/_/g, '%5F')}`),
  'card number in the path': (s) => get(`/v1/payment_intents/${s.card()}`),
  'query string by name and shape': (s) => get(`/v1/payment_intents?${encodeURIComponent(s.secretName())}=${s.password()}&ref=${s.key()}&limit=1`, 'query'),
  'GraphQL variable by name': (s) => graphql('query($v: String) { account { id } }', { [s.secretName({ graphql: true })]: s.password(), memo: s.keep() }),
  'GraphQL variables: secret-named array and object': (s) => graphql('query { account { id } }', { input: { [s.secretName()]: [s.password(), { x: s.password() }], memo: s.keep() } }),
  'GraphQL variables as a JSON string': (s) => graphql('query { account { id } }', json(json({ [s.secretName()]: s.password(), memo: s.keep() }))),
  'GraphQL variable: card number as a number': (s) => graphql('query($n: Float) { account { id } }', `{"n": ${s.card()}, "memo": "${s.keep()}"}`),
  'GraphQL variable echoed in the error': (s) => {
    const name = s.secretName({ graphql: true });
    return graphql(`query($${name}: ID!) { paymentIntent(id: $${name}) { id } }`, { [name]: [s.password()], memo: s.keep() });
  },
  'GraphQL inline argument by name': (s) => graphql(`{ account(${s.secretName({ graphql: true })}: "${s.password()}") { id } memo: account { id } }`, undefined, `,"operationName":"${s.keep()}"`),
  'GraphQL block string argument': (s) => graphql(`{ account(${s.secretName({ graphql: true })}: """${s.password()}""") { id } }`, undefined, `,"operationName":"${s.keep()}"`),
  'GraphQL shaped literal': (s) => graphql(`{ paymentIntent(id: "x${s.shaped()}") { id } }`, undefined, `,"operationName":"${s.keep()}"`),
  'GraphQL bare token in broken JSON': (s) => ({ ...graphql('{ account { id } }'), body: `{"query": "{ account { id } }", "variables": {"${s.secretName()}": ${s.shaped()}}, "memo": "${s.keep()}"}` }),
};
