/**
 * Secrets recognised by their shape, wherever they stand in a text: keys and tokens by their prefix
 * (`sk_test_`, `sk_live_`, `pk_…`, `rk_…`, `ct_…`, `whsec_`, and what follows `Bearer`), matched anywhere,
 * glued to a word before them too (`x9whsec_…`, `Bearer%20sk_test_…` once decoded); and card numbers:
 * Luhn-valid runs of 13 to 19 digits, groups split by a space or a dash allowed.
 */
export const REDACTED = '[REDACTED]';

/**
 * The prefixes are matched without a word boundary before them (a secret glued to another word is
 * still a secret). A webhook secret's body may be base64 (`+`, `/`, `=`); a key's is letters and digits.
 * Case is ignored: `SK_TEST_…` is no key the gateway issued, but it is no one's business either.
 */
const SHAPE = /(?:sk|pk|rk|ct)_(?:test|live)_[\w-]*|whsec_[\w+/=-]*|bearer(?:\s|\+)+[^\s"'\\,;&]+|\d(?:[ -]?\d){12,}/gi;

const PREFIX_HINT = /_(?:test|live)_|whsec_|bearer/i;

/**
 * The cheap test first, once per body: most texts (ids, amounts, dates, names) hold nothing of these
 * shapes. Digit runs are counted in a loop: a regex trying `\d(?:[ -]?\d){12}` at every digit cost
 * more than the rest of the redaction of a clean body.
 */
export function mayHaveShape(text: string): boolean {
  return PREFIX_HINT.test(text) || hasLongDigitRun(text);
}

/** Whether `text` has 13 digits in a row, single spaces or dashes between them allowed. */
function hasLongDigitRun(text: string): boolean {
  let digits = 0;
  let gap = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++digits >= 13) return true;
      gap = false;
    } else if ((c === 32 || c === 45) && digits > 0 && !gap) gap = true;
    else {
      digits = 0;
      gap = false;
    }
  }
  return false;
}

/** `text` with every secret-shaped part replaced by `[REDACTED]` (the same string when there is none). */
export function redactShapes(text: string): string {
  return text.replace(SHAPE, (match: string) => (isDigit(match.charCodeAt(0)) && !holdsCardNumber(match) ? match : REDACTED));
}

/** Whether a JSON number's text is (or holds) a card number: numbers are judged on their digits as sent. */
export function numberHoldsCard(text: string): boolean {
  const run = /\d{13,}/.exec(text);
  return run !== null && holdsCardNumber(run[0]);
}

/**
 * Whether a run of digits (maybe grouped by single spaces or dashes) is or holds a card number: the
 * whole run, or a run of its groups (`qty 2 4242 4242 4242 4242` starts with someone else's digits), of
 * 13 to 19 digits passing the Luhn check. An unbroken group of more than 19 digits is no card number
 * (an id such as `pay_000…0` in a test, a nanosecond time): nearly every such run holds some 13-19
 * digit window that passes the Luhn check, so judging windows would redact them all.
 */
function holdsCardNumber(run: string): boolean {
  const groups = run.split(/[ -]/);
  for (let first = 0; first < groups.length; first++) {
    let digits = '';
    for (let last = first; last < groups.length; last++) {
      digits += groups[last];
      if (digits.length > 19) break;
      if (digits.length >= 13 && luhn(digits, 0, digits.length)) return true;
    }
  }
  return false;
}

/** The Luhn check of digits[start, end). */
function luhn(digits: string, start: number, end: number): boolean {
  let sum = 0;
  let double = false;
  for (let i = end - 1; i >= start; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/**
 * `%XX` escapes decoded, byte by byte, up to three times over (`%255F` is `%5F` is `_`): enough to see
 * what a URL-encoded secret spells. Never throws, unlike decodeURIComponent on a broken escape.
 */
export function percentDecoded(text: string): string {
  let decoded = text;
  for (let round = 0; round < 3 && decoded.includes('%'); round++) {
    const next = decoded.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === decoded) break;
    decoded = next;
  }
  return decoded;
}
