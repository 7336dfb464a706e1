import { isSecretName, mayNameASecret } from './secretNames';
import { mayHaveShape, numberHoldsCard, percentDecoded, REDACTED, redactShapes } from './secretShapes';

export { REDACTED } from './secretShapes';

/**
 * The request log's redaction (contract decisions, "Hostile clients at the edge"): one module for every path
 * that keeps request text (bodies, paths, query strings). A body is read by its JSON structure, leniently, so
 * broken or cut JSON is redacted as far as it goes; a body that is not JSON is redacted across its raw text.
 * More: docs/decisions/notes/events-and-payments.md, "The request log's redaction".
 */

/** One token: a string (maybe unterminated), a bracket, a `,` or `:`, or any other run (number, word). */
const TOKEN = /"([^"\\]*(?:\\.[^"\\]*)*)("?)|[{[]|[}\]]|[,:]|[^\s"{}[\],:]+/g;
const COLON_NEXT = /\s*:/y;
const JSON_NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** Spaces between the words of a bare value (`{"password": correct horse}`): all of it is the value. */
const MORE_BARE_WORDS = /(?:[ \t]+[^\s"{}[\],:]+)*/y;
const QUOTED_REDACTED = `"${REDACTED}"`;

/**
 * A JSON (or broken JSON, or any) body with its secrets redacted; the same string when it holds none.
 * `found` collects the values redacted by their name (redactEchoes takes them out of the answer too).
 */
export function redactBody(text: string, found?: string[]): string {
  // Whether the body may hold a secret's shape, or name one, tested once on the whole text: a body with
  // neither (most payments, events, lists) is not walked at all; in one that is, strings are tested for
  // shapes only if the body may hold one (those with escapes are tested on what they spell).
  const plain = withSimpleEscapesDecoded(text);
  const plainShapes = plain !== undefined && mayHaveShape(plain);
  if (plain !== undefined && !plainShapes && !mayNameASecret(plain) && !percentEscapesMayHoldASecret(plain)) return text;
  const shapes = plain === text ? plainShapes : mayHaveShape(text);
  const pieces: string[] = [];
  let copied = 0;
  let secretNext = false;
  // An unclosed bracket or string (a body cut at the scan limit) is read whole by the walk: only stray
  // words and closing brackets make it text that is not JSON, to be read as raw text too.
  let looksLikeJson = true;
  let depth = 0;
  const replace = (start: number, end: number, by: string) => {
    pieces.push(text.slice(copied, start), by);
    copied = end;
  };
  TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = TOKEN.exec(text)) !== null) {
    const token = m[0];
    const start = m.index;
    const first = token.charCodeAt(0);
    if (first === 0x22 /* " */) {
      if (colonNext(text, TOKEN.lastIndex)) {
        // A key: what follows is a secret when the key names one (or the key is itself secret-shaped).
        const name = decoded(m[1]!);
        secretNext = isSecretName(name);
        const clean = redactString(m[1]!, name, shapes);
        if (clean !== m[1]) replace(start, TOKEN.lastIndex, `"${clean}${m[2]}`);
        continue;
      }
      if (secretNext) {
        found?.push(decoded(m[1]!));
        replace(start, TOKEN.lastIndex, QUOTED_REDACTED);
      } else {
        const clean = redactString(m[1]!, decoded(m[1]!), shapes, found);
        if (clean !== m[1]) replace(start, TOKEN.lastIndex, `"${clean}${m[2]}`);
      }
      secretNext = false;
    } else if (first === 0x7b /* { */ || first === 0x5b /* [ */) {
      if (secretNext) {
        // Everything in it, to its closing bracket (or the end of a broken body).
        const end = containerEnd(text, start);
        if (found) collectValues(text.slice(start, end), found);
        replace(start, end, QUOTED_REDACTED);
        TOKEN.lastIndex = end;
        secretNext = false;
      } else depth++;
    } else if (first === 0x7d /* } */ || first === 0x5d /* ] */) {
      if (--depth < 0) looksLikeJson = false;
      secretNext = false;
    } else if (first === 0x2c /* , */ || first === 0x3a /* : */) {
      if (first === 0x2c) secretNext = false;
    } else {
      looksLikeJson = bareToken(token, start) && looksLikeJson;
    }
  }
  const out = copied === 0 ? text : pieces.join('') + text.slice(copied);
  // Not JSON: also across the raw text (`name = value` pairs split into several bare words).
  return looksLikeJson ? out : redactText(out, mayHaveShape(out), found);

  /** A number, literal or stray word; false when it is not JSON. */
  function bareToken(token: string, start: number): boolean {
    const literal = token === 'true' || token === 'false' || token === 'null';
    const number = !literal && JSON_NUMBER.test(token);
    if (!literal && !number && colonNext(text, TOKEN.lastIndex)) {
      // An unquoted key (`{password: "x"}`).
      secretNext = isSecretName(token);
      return false;
    }
    if (secretNext && !literal) {
      MORE_BARE_WORDS.lastIndex = TOKEN.lastIndex;
      MORE_BARE_WORDS.test(text);
      TOKEN.lastIndex = MORE_BARE_WORDS.lastIndex;
      found?.push(text.slice(start, TOKEN.lastIndex));
      replace(start, TOKEN.lastIndex, QUOTED_REDACTED);
    } else if (number) {
      if (numberHoldsCard(token)) replace(start, TOKEN.lastIndex, QUOTED_REDACTED);
    } else if (!literal) {
      const clean = redactText(token, shapes, found);
      if (clean !== token) replace(start, TOKEN.lastIndex, clean);
    }
    secretNext = false;
    return literal || number;
  }
}

/**
 * The text the whole-body tests above judge: the body itself, or with its JSON escapes of white space,
 * quotes, backslashes and slashes decoded (a GraphQL request has a `\n` on every line of its query,
 * which sent every such request through the walk); undefined when it holds any other escape
 * (`\u0073k_test_…` spells a key only once decoded), which only the walk reads, string by string.
 */
function withSimpleEscapesDecoded(text: string): string | undefined {
  if (!text.includes('\\')) return text;
  let simple = true;
  const decodedText = text.replace(ESCAPE, (_m, c: string) => {
    const plainChar = SIMPLE_ESCAPES.get(c);
    if (plainChar === undefined) simple = false;
    return plainChar ?? '';
  });
  return simple ? decodedText : undefined;
}

const ESCAPE = /\\([\s\S])/g;
const SIMPLE_ESCAPES: ReadonlyMap<string, string> = new Map([
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
  ['f', '\f'],
  ['"', '"'],
  ['\\', '\\'],
  ['/', '/'],
]);

/**
 * Whether the words with `%` escapes in them (a URL, a form-encoded value), decoded, spell a secret.
 * Found from each `%` outwards: a regex for such words, tried at every position, cost the square of
 * a word's length.
 */
function percentEscapesMayHoldASecret(text: string): boolean {
  let at = text.indexOf('%');
  while (at >= 0) {
    let start = at;
    while (start > 0 && !isWordEnd(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < text.length && !isWordEnd(text.charCodeAt(end))) end++;
    const plain = percentDecoded(text.slice(start, end));
    if (mayHaveShape(plain) || mayNameASecret(plain)) return true;
    at = text.indexOf('%', end);
  }
  return false;
}

/** White space or a quote: where a word with escapes ends. */
function isWordEnd(c: number): boolean {
  return c === 0x20 || c === 0x22 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Whether a `:` follows at `at` (white space skipped): the token before it is a key. */
function colonNext(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if (c === 0x3a) return true;
  if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  COLON_NEXT.lastIndex = at;
  return COLON_NEXT.test(text);
}

/** A JSON string's content (still escaped) redacted, judged on its decoded text `plain`. */
function redactString(raw: string, plain: string, shapes: boolean, found?: string[]): string {
  const clean = redactText(plain, plain === raw ? shapes : mayHaveShape(plain), found);
  if (clean === plain) return raw;
  return JSON.stringify(clean).slice(1, -1);
}

/**
 * Free text (a string value, a path with its query, a body that is not JSON) redacted by value shape
 * and by `name: value` / `name=value` pairs whose name is a secret's, then again on what its `%XX`
 * escapes spell: when that reveals a secret, the decoded text, redacted, is what is shown.
 */
export function redactText(text: string, shapes = mayHaveShape(text), found?: string[]): string {
  const clean = redactPlainText(text, shapes, found);
  if (!clean.includes('%')) return clean;
  const decodedText = percentDecoded(clean);
  if (decodedText === clean) return clean;
  const decodedClean = redactPlainText(decodedText, mayHaveShape(decodedText), found);
  return decodedClean === decodedText ? clean : decodedClean;
}

/** `shapes`: whether the text (or the body it is part of) may hold a secret's shape at all. */
function redactPlainText(text: string, shapes: boolean, found?: string[]): string {
  const shaped = shapes ? redactShapes(text) : text;
  // Only a text with a separator can pair a name with a value.
  return shaped.includes(':') || shaped.includes('=') ? redactNamedValues(shaped, found) : shaped;
}

/**
 * A name (quoted or not, up to four words: `api key`; `_`, `-` and spaces around it), then `:` or `=`.
 * It starts where a word does: tried inside every word, the name's words cost the square of their length. Its value is found in code
 * (valueEnd): a quoted string, a bracketed object or list, or a bare run up to a separator.
 */
const NAME_THEN_SEPARATOR = /(?<![\w-])["']?[ \t_-]*(?<![A-Za-z0-9])([A-Za-z][\w-]*(?: [\w-]+){0,3})[ \t]*["']?[ \t]*[:=][ \t]*/g;
const DOUBLE_QUOTED = /"(?:[^"\\]|\\.)*"?/y;
const BLOCK_STRING = /"""[\s\S]*?(?:"""|$)/y;
const SINGLE_QUOTED = /'[^'\n]*'?/y;
const BARE_VALUE = /[^,&;\r\n{}[\]()"']*/y;

function redactNamedValues(text: string, found?: string[]): string {
  const pieces: string[] = [];
  let copied = 0;
  NAME_THEN_SEPARATOR.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = NAME_THEN_SEPARATOR.exec(text)) !== null) {
    const valueStart = NAME_THEN_SEPARATOR.lastIndex;
    if (!namesASecret(m[1]!)) {
      // The value may itself be `name=value` (`a=password=x` is unlikely; `note: password: x` is not).
      NAME_THEN_SEPARATOR.lastIndex = valueStart === m.index ? valueStart + 1 : valueStart;
      continue;
    }
    const end = valueEnd(text, valueStart);
    const value = text.slice(valueStart, end);
    if (end === valueStart || value === 'null' || value === 'true' || value === 'false' || value.startsWith('$')) continue;
    const quote = value[0] === '"' || value[0] === "'" ? value[0] : '';
    found?.push(value.replace(QUOTES_AROUND, ''));
    pieces.push(text.slice(copied, valueStart), `${quote}${REDACTED}${quote}`);
    copied = end;
    NAME_THEN_SEPARATOR.lastIndex = end;
  }
  return copied === 0 ? text : pieces.join('') + text.slice(copied);
}

/** `the api key` names a secret when some run of its last words does (`api key`, `key` alone does not). */
function namesASecret(name: string): boolean {
  if (isSecretName(name)) return true;
  let space = name.indexOf(' ');
  while (space >= 0) {
    if (isSecretName(name.slice(space + 1))) return true;
    space = name.indexOf(' ', space + 1);
  }
  return false;
}

function valueEnd(text: string, start: number): number {
  const c = text[start];
  if (c === '{' || c === '[') return containerEnd(text, start);
  const pattern = c === '"' ? (text.startsWith('"""', start) ? BLOCK_STRING : DOUBLE_QUOTED) : c === "'" ? SINGLE_QUOTED : BARE_VALUE;
  pattern.lastIndex = start;
  pattern.test(text);
  let end = pattern.lastIndex;
  if (pattern === BARE_VALUE) while (end > start && /\s/.test(text[end - 1]!)) end--;
  return end;
}

/** The quotes around a quoted value: `"`, `'` or a GraphQL block string's three. */
const QUOTES_AROUND = /^(?:"{1,3}|')|(?:"{1,3}|')$/g;

/** The strings and bare words of a redacted object or list, as what the answer may echo. */
const VALUE_IN_CONTAINER = /"((?:[^"\\]|\\.)*)"|[^\s"{}[\],:]+/g;
function collectValues(container: string, found: string[]): void {
  for (const m of container.matchAll(VALUE_IN_CONTAINER)) found.push(m[1] === undefined ? m[0] : decoded(m[1]));
}

/**
 * An answer without the values its request's secret-named fields held: an answer may quote what it
 * was sent (GraphQL: `Variable "$password" got invalid value …`) where no name marks it any more.
 * Values shorter than ECHO_MIN_CHARS are left (`true`, `1`, `abc` would eat ordinary text).
 */
const ECHO_MIN_CHARS = 6;
export function redactEchoes(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of new Set(values)) {
    if (value.length < ECHO_MIN_CHARS) continue;
    out = out.split(value).join(REDACTED);
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) out = out.split(escaped).join(REDACTED);
  }
  return out;
}

/** Where the object or list opening at `start` closes (strings skipped), or the end of the text. */
const STRING_OR_BRACKET = /"(?:[^"\\]|\\.)*"?|[{[]|[}\]]/g;
function containerEnd(text: string, start: number): number {
  let depth = 0;
  STRING_OR_BRACKET.lastIndex = start;
  let m: RegExpExecArray | null;
  while ((m = STRING_OR_BRACKET.exec(text)) !== null) {
    const c = m[0];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (--depth === 0) return STRING_OR_BRACKET.lastIndex;
    }
  }
  return text.length;
}

/** A JSON string's content decoded (a broken escape: its backslashes dropped, enough to read it). */
function decoded(raw: string): string {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw.replace(/\\u([0-9a-fA-F]{4})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))).replace(/\\(.)/g, '$1');
  }
}

/**
 * A request's path as logged and stored: redacted like free text (a key or card number in a path
 * segment, `?token=…` should a query string ever be kept).
 */
export function redactPath(path: string): string {
  return redactText(path);
}
