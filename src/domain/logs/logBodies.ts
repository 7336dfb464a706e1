/**
 * What GET /logs shows of a request's and a response's body: secrets replaced by `[REDACTED]`, then cut
 * at 4 KiB. Runs in the log's write path (the batch flush, requestLogService.ts), never on the request:
 * the request only keeps a reference to text it had already read or serialized.
 *
 * The body is scanned as text, not parsed: only its first SCAN_CHARS characters, so a 500-payment list
 * costs what a 5 KiB body costs, and a body that is not JSON (an SVG, a broken request) is handled the
 * same way. Every JSON string and literal of that prefix is a token; a value is redacted when
 * - the key it is under is named like a secret (`secret`, `webhook_secret`, `token`, `client_token`,
 *   `password`, `authorization`, `api_key`, `sk`, `pk`, ...: any nesting, GraphQL `variables` included),
 * - or it contains something shaped like a key or secret (`sk_test_…`, `pk_test_…`, `ct_test_…`,
 *   `whsec_…`, `Bearer …`), wherever it stands (a GraphQL query's inline argument, an alias),
 * - or it is card-number-like (13 to 19 digits).
 */
export const BODY_LIMIT_BYTES = 4096;
const ELLIPSIS = '…';
/** Enough characters to fill BODY_LIMIT_BYTES after redaction shortened what it replaced. */
const SCAN_CHARS = BODY_LIMIT_BYTES + 1024;
export const REDACTED = '[REDACTED]';

/** Key names compared lower case without `_`/`-`: the name itself or ending in one of these (or its plural). */
const SECRET_KEY_ENDINGS = ['secret', 'token', 'password', 'passwd', 'passphrase', 'authorization', 'apikey', 'cookie', 'privatekey'];
const SECRET_KEYS: ReadonlySet<string> = new Set(['sk', 'pk']);

/** Unfinished at the end of the scanned prefix too: a secret cut in half is still redacted. */
const SECRET_VALUE = /\b(?:sk|pk|rk)_(?:test|live)_[0-9A-Za-z]*|\bct_(?:test|live)_[0-9A-Za-z]*|\bwhsec_[0-9A-Za-z]*|\bBearer\s+[^\s"\\]+/g;
const CARD_LIKE = /^(?:\d[ -]?){12,18}\d$/;

/** A JSON string (maybe unterminated), then whether a `:` makes it a key; or a number / true / false. */
const TOKEN = /"((?:[^"\\]|\\.)*)(")?(\s*:)?|(-?\d[\d.eE+-]*|true|false)/g;

/** Answers per key name: bodies repeat the same few dozen names, so each is worked out once (bounded). */
// eslint-disable-next-line no-restricted-syntax -- a memo of a pure function of the name: the same answer for every gateway
const secretKeyMemo = new Map<string, boolean>();

export function isSecretKey(name: string): boolean {
  let secret = secretKeyMemo.get(name);
  if (secret === undefined) {
    secret = namesASecret(name);
    if (secretKeyMemo.size >= 2_000) secretKeyMemo.clear();
    secretKeyMemo.set(name, secret);
  }
  return secret;
}

function namesASecret(name: string): boolean {
  const key = name.toLowerCase().replace(/[_\-\s]/g, '');
  return SECRET_KEYS.has(key) || SECRET_KEY_ENDINGS.some((end) => key.endsWith(end) || key.endsWith(`${end}s`));
}

/** The body as GET /logs shows it; null for no body. */
export function loggedBody(text: string | null | undefined): string | null {
  if (text === null || text === undefined || text.length === 0) return null;
  const truncated = text.length > SCAN_CHARS;
  return cut(redact(truncated ? text.slice(0, SCAN_CHARS) : text), truncated);
}

/**
 * Whether `text` could hold anything `redact` changes: a key named like a secret, a secret-shaped value,
 * 13 or more digits in a row (a card number), or an escape that could spell one of them out. Most bodies
 * (payments, events, lists) hold none, and a few native regex scans cost much less than tokenizing
 * them; when in doubt, `redact` does the full walk.
 */
const MAY_HOLD_SECRET =
  /(?:secret|token|passw(?:or)?d|passphrase|authori[sz]ation|api[_\-\s]?key|cookie|private[_\-\s]?key)s?"\s*:|"(?:sk|pk)"\s*:|(?:sk|pk|rk|ct)_(?:test|live)_|whsec_|bearer|\d(?:[ -]?\d){12}|\\/i;

export function redact(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let underSecretKey = false;
  return text.replace(TOKEN, (token: string, raw: string | undefined, closed: string | undefined, colon: string | undefined, literal: string | undefined) => {
    if (literal !== undefined) {
      const was = underSecretKey;
      underSecretKey = false;
      return was ? `"${REDACTED}"` : token;
    }
    if (closed && colon) {
      underSecretKey = isSecretKey(decoded(raw!));
      return token;
    }
    const was = underSecretKey;
    underSecretKey = false;
    if (was) return `"${REDACTED}"${colon ?? ''}`;
    return `"${redactValue(raw!)}${closed ?? ''}${colon ?? ''}`;
  });
}

/** A string value's content (still JSON-escaped), with secret-shaped parts redacted. */
function redactValue(raw: string): string {
  // Escapes could spell a secret out (\u0073k_test_…): match on the decoded text when there are any.
  const text = raw.includes('\\') ? decoded(raw) : raw;
  if (CARD_LIKE.test(text)) return REDACTED;
  SECRET_VALUE.lastIndex = 0;
  if (!SECRET_VALUE.test(text)) return raw;
  const clean = text.replace(SECRET_VALUE, REDACTED);
  return text === raw ? clean : JSON.stringify(clean).slice(1, -1);
}

function decoded(raw: string): string {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    // Unterminated or not JSON: drop the escapes' backslashes, enough to see what they spell.
    return raw.replace(/\\u([0-9a-fA-F]{4})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))).replace(/\\(.)/g, '$1');
  }
}

/** At most BODY_LIMIT_BYTES of UTF-8, ending in `…` when anything was left out. */
function cut(text: string, truncated: boolean): string {
  // Three UTF-8 bytes per UTF-16 unit at most: short texts need no encoding.
  if (!truncated && text.length * 3 <= BODY_LIMIT_BYTES) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (!truncated && bytes.length <= BODY_LIMIT_BYTES) return text;
  const room = BODY_LIMIT_BYTES - Buffer.byteLength(ELLIPSIS);
  // A character split by the cut decodes as U+FFFD: drop it rather than show it.
  const head = bytes.subarray(0, Math.min(room, bytes.length)).toString('utf8').replace(/\uFFFD+$/, '');
  return head + ELLIPSIS;
}
