import { UsageError } from './errors';

/** An absolute http(s) URL given on the command line, or a usage error naming the flag. */
export function parseHttpUrl(raw: string, flag: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${flag} must be an absolute http(s) URL, got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${flag} must be http(s), got '${raw}'`);
  return url;
}
