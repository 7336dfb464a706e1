/**
 * What the gateway sends is shown, never obeyed: a string from the server (an account name, an event
 * type, a path in the request log, an error message) may hold terminal control sequences, and printed
 * raw, `\x1b]0;…\x07` retitles the terminal, `\x1b[2J` clears it, a CR or newline forges a line. So every
 * server-supplied value goes through `printable` at the place it is printed: C0 controls (newline and
 * tab included: a value is shown on one line, pgw's own line breaks are its layout), ESC, DEL and the
 * C1 controls (U+0080–U+009F, which some terminals obey as ESC sequences) are written as visible
 * escapes (`\x1b`, `\n`, `\x9b`). Everything else, UTF-8 text included, passes as is.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is this module's purpose
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeControl(c: string): string {
  return NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

export function printable(value: unknown): string {
  return String(value ?? '').replace(CONTROLS, escapeControl);
}

/**
 * JSON for standard output (--json): JSON.stringify already writes C0 controls as `\u00XX`, but not
 * DEL or the C1 controls; those are written as `\u00XX` too, which parses back to the same string.
 */
export function printableJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\u009f]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
}
