import { redactBody, redactEchoes } from './redact';

/**
 * What GET /logs shows of a request's and a response's body: secrets replaced by `[REDACTED]`
 * (redact.ts says how), then cut at 4 KiB. Runs in the log's write path (the batch flush,
 * requestLogService.ts), never on the request: the request only keeps a reference to text it had
 * already read or serialized.
 *
 * Only the body's first SCAN_CHARS characters are read, so a 500-payment list costs what a 5 KiB body
 * costs; a body cut there is broken JSON, which the redaction reads as far as it goes.
 */
export const BODY_LIMIT_BYTES = 4096;
const ELLIPSIS = '…';
/** Enough characters to fill BODY_LIMIT_BYTES after redaction shortened what it replaced. */
const SCAN_CHARS = BODY_LIMIT_BYTES + 1024;

/**
 * The body as GET /logs shows it; null for no body. `found` collects the values redacted by their
 * name; `echoes` (those of the request, for its answer) are taken out wherever they stand.
 */
export function loggedBody(text: string | null | undefined, opts: { found?: string[]; echoes?: readonly string[] } = {}): string | null {
  if (text === null || text === undefined || text.length === 0) return null;
  const truncated = text.length > SCAN_CHARS;
  let redacted = redactBody(truncated ? withoutCutWord(text.slice(0, SCAN_CHARS)) : text, opts.found);
  if (opts.echoes && opts.echoes.length > 0) redacted = redactEchoes(redacted, opts.echoes);
  return cut(redacted, truncated);
}

/** A request's and its answer's bodies as GET /logs shows them: the answer without what the request's secrets held. */
export function loggedBodies(request: string | null | undefined, response: string | null | undefined): { request: string | null; response: string | null } {
  const found: string[] = [];
  const requestBody = loggedBody(request, { found });
  return { request: requestBody, response: loggedBody(response, { echoes: found }) };
}

/**
 * The scanned prefix without the word (or grouped digits) the scan cut through: its beginning alone
 * could be most of a card number, too short to pass the Luhn check, or a secret's start.
 */
function withoutCutWord(prefix: string): string {
  let end = prefix.length;
  while (end > 0) {
    const c = prefix.charCodeAt(end - 1);
    const wordChar = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 43 || c === 47 || c === 61 || c === 37;
    const digitGap = c === 32 && end >= 2 && isDigitAt(prefix, end - 2) && isDigitAt(prefix, end);
    if (!wordChar && !digitGap) break;
    end--;
  }
  return prefix.slice(0, end);
}

function isDigitAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 48 && c <= 57;
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
