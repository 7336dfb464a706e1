import { printableJson } from './printable';

/**
 * How pgw writes: colour and a progress line only when standard output is a terminal (and NO_COLOR is
 * not set, https://no-color.org); plain lines when piped; one JSON object per line with --json.
 */
export interface Output {
  readonly json: boolean;
  readonly color: boolean;
  /** One line on standard output. */
  line(text: string): void;
  /** One JSON object on one line of standard output. */
  object(value: unknown): void;
  /** A notice on standard error (connection changes, warnings), so that stdout stays parseable. */
  notice(text: string): void;
  /** A transient "what is happening now" line on a terminal; nothing when piped. */
  progress(text: string): void;
  paint(style: Style, text: string): string;
}

export type Style = 'green' | 'red' | 'yellow' | 'cyan' | 'dim' | 'bold';

const ANSI: Record<Style, [number, number]> = {
  green: [32, 39],
  red: [31, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  dim: [2, 22],
  bold: [1, 22],
};

export function createOutput(opts: { json?: boolean } = {}, env: NodeJS.ProcessEnv = process.env): Output {
  const tty = Boolean(process.stdout.isTTY);
  const color = tty && !opts.json && !(env.NO_COLOR !== undefined && env.NO_COLOR !== '') && env.TERM !== 'dumb';
  const showProgress = tty && !opts.json && Boolean(process.stderr.isTTY);
  let progressShown = false;
  const clearProgress = () => {
    if (progressShown) process.stderr.write('\r\x1b[K');
    progressShown = false;
  };
  return {
    json: Boolean(opts.json),
    color,
    line(text) {
      clearProgress();
      process.stdout.write(`${text}\n`);
    },
    object(value) {
      clearProgress();
      process.stdout.write(`${printableJson(value)}\n`);
    },
    notice(text) {
      clearProgress();
      process.stderr.write(`${color ? `\x1b[2m${text}\x1b[22m` : text}\n`);
    },
    progress(text) {
      if (!showProgress) return;
      process.stderr.write(`\r\x1b[K${color ? `\x1b[2m… ${text}\x1b[22m` : `… ${text}`}`);
      progressShown = true;
    },
    paint(style, text) {
      if (!color) return text;
      const [open, close] = ANSI[style];
      return `\x1b[${open}m${text}\x1b[${close}m`;
    },
  };
}

/** A 2xx in green, anything else (or no answer) in red. */
export function paintStatus(out: Output, status: number | string): string {
  const ok = typeof status === 'number' && status >= 200 && status < 300;
  return out.paint(ok ? 'green' : 'red', String(status));
}
