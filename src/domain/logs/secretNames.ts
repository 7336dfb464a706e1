/**
 * Which names (JSON keys, query parameters, GraphQL arguments, `name=value` pairs) hold a secret: the
 * one list the request log's redaction (redact.ts) judges names by. Names are compared lower case with
 * `_`, `-` and white space removed, so `Client_Secret`, `client-secret`, `clientSecret`, `password_`
 * and `"pass word "` are all the same name.
 */

/** A name that is one of these, or ends in one of them (or its plural), is a secret's. */
const SECRET_NAME_ENDINGS: readonly string[] = [
  'secret',
  'secretkey',
  'token',
  'password',
  'passwd',
  'passphrase',
  'authorization',
  'apikey',
  'accesskey',
  'privatekey',
  'signingkey',
  'cookie',
  'credential',
  'cardnumber',
  'securitycode',
];

/** Short names that are secrets only on their own (`desk` or `company` are not). */
const SECRET_NAMES: ReadonlySet<string> = new Set(['sk', 'pk', 'rk', 'pan', 'pin', 'otp', 'cvv', 'cvc', 'cvv2', 'cvc2']);

/** Answers per name: bodies repeat the same few dozen names, so each is worked out once (bounded). */
// eslint-disable-next-line no-restricted-syntax -- a memo of a pure function of the name: the same answer for every gateway
const memo = new Map<string, boolean>();
const MEMO_MAX = 2_000;

export function isSecretName(name: string): boolean {
  let secret = memo.get(name);
  if (secret === undefined) {
    secret = namesASecret(name);
    if (memo.size >= MEMO_MAX) memo.clear();
    memo.set(name, secret);
  }
  return secret;
}

function namesASecret(name: string): boolean {
  const key = name.toLowerCase().replace(/[_\-\s]/g, '');
  return SECRET_NAMES.has(key) || SECRET_NAME_ENDINGS.some((end) => key.endsWith(end) || key.endsWith(`${end}s`));
}

/**
 * SECRET_NAME_ENDINGS as one pattern (a regex of literals is faster than a search per ending), each
 * where a name ends (then only a plural `s`): `apiKeyId`, an id every payment answer holds, names no
 * secret, as isSecretName judges it, and must not send the whole answer through the walk; and
 * SECRET_NAMES standing apart from letters and digits. test/unit/logBodies.test.ts holds both in step
 * with the lists.
 */
const ENDING = /(?:secret(?:key)?|token|passw(?:ord|d)|passphrase|authorization|apikey|accesskey|privatekey|signingkey|cookie|credential|cardnumber|securitycode)s?(?![a-z0-9])/;
/** SECRET_NAMES followed by no letter or digit; shortNameAlone checks what stands before (a lookbehind here cost twice as much). */
const SHORT_NAME = /(?:sk|pk|rk|pan|pin|otp|cv[vc]2?)(?![a-z0-9])/g;

/**
 * Whether a text may name a secret anywhere (a key, a `name: value` pair), however separators split the
 * name: a cheap test of a whole body, so that one naming none (most payments, events, lists) is not
 * read token by token. The text is squeezed as names are; short names must stand apart (`desk` is no
 * `sk`), in the squeezed text (`"s_k":`) or the text as it is (`my pin: 1234`).
 */
export function mayNameASecret(text: string): boolean {
  const lower = text.toLowerCase();
  const squeezed = lower.replace(/[\s_-]+/g, '');
  return ENDING.test(squeezed) || shortNameAlone(squeezed) || shortNameAlone(lower);
}

/** Whether a short secret name stands in `lower` with no letter or digit on either side. */
function shortNameAlone(lower: string): boolean {
  SHORT_NAME.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = SHORT_NAME.exec(lower)) !== null) {
    const before = m.index === 0 ? 0 : lower.charCodeAt(m.index - 1);
    if (!((before >= 97 && before <= 122) || (before >= 48 && before <= 57))) return true;
    // `desk` then `skpin`: the next try starts one character on, as the lookbehind's search did.
    SHORT_NAME.lastIndex = m.index + 1;
  }
  return false;
}

/** The lists, for the test that holds the patterns above in step with them. */
export const SECRET_NAME_LISTS = { endings: SECRET_NAME_ENDINGS, names: [...SECRET_NAMES] } as const;
