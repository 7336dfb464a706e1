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

/**
 * The cheap test first, once per body: most texts (ids, amounts, dates, names) hold nothing of these
 * shapes. The prefixes are found by `includes` on the lower-cased text (a case-insensitive regex of
 * them cost three times as much on a 5 KiB answer).
 */
export function mayHaveShape(text: string): boolean {
  const lower = text.toLowerCase();
  return lower.includes('_test_') || lower.includes('_live_') || lower.includes('whsec_') || lower.includes('bearer') || hasLongDigitRun(text);
}

/**
 * Whether `text` has 13 digits in a row, single spaces or dashes between them allowed. Such a run lies
 * in a span of 13 or more characters that are all digits, spaces or dashes, so only every 13th
 * character is read until one of them is such a character; then the span around it is judged whole.
 * A loop over every character cost four times as much on a 5 KiB answer full of dates and amounts.
 */
function hasLongDigitRun(text: string): boolean {
  const n = text.length;
  let at = 12;
  while (at < n) {
    if (!isRunChar(text.charCodeAt(at))) {
      at += 13;
      continue;
    }
    let start = at;
    while (start > 0 && isRunChar(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < n && isRunChar(text.charCodeAt(end))) end++;
    if (end - start >= 13 && spanHasDigitRun(text, start, end)) return true;
    at = end + 13;
  }
  return false;
}

/** A digit, a space or a dash. */
function isRunChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 32 || c === 45;
}

/** Whether text[start, end), all digits, spaces and dashes, has 13 digits with single separators between them. */
function spanHasDigitRun(text: string, start: number, end: number): boolean {
  let digits = 0;
  let gap = false;
  for (let i = start; i < end; i++) {
    if (isDigit(text.charCodeAt(i))) {
      if (++digits >= 13) return true;
      gap = false;
    } else if (digits > 0 && !gap) gap = true;
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
