import { assertMatchesContract } from '../../../test/support/client';
import { operations } from '../src/generated/operations';

const matchers = Object.entries(operations).map(([operationId, op]) => ({
  operationId,
  method: op.method as string,
  regex: new RegExp(
    '^' + (op.root ? '' : '/v1') + op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+') + '$',
  ),
}));

/** The operationId serving `METHOD pathname` (pathname as sent, /v1 included), if any. */
export function operationIdOf(method: string, pathname: string): string | undefined {
  return matchers.find((m) => m.method === method && m.regex.test(pathname))?.operationId;
}

/**
 * A fetch for createClient that records which operations answered 2xx (what the client really sent,
 * not what a test says it called) and holds every JSON answer to openapi.yaml (test/support/client.ts).
 */
export function recordingFetch(): { fetch: (request: Request) => Promise<Response>; succeeded: Set<string>; violations: string[] } {
  const succeeded = new Set<string>();
  const violations: string[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const response = await globalThis.fetch(request);
    const { pathname } = new URL(request.url);
    const operationId = operationIdOf(request.method, pathname);
    if (operationId && response.ok) succeeded.add(operationId);
    const contentType = response.headers.get('content-type') ?? '';
    if (contentType.includes('application/json')) {
      const text = await response.clone().text();
      try {
        assertMatchesContract(request.method, pathname, response.status, contentType, text ? JSON.parse(text) : text, response.headers);
      } catch (err) {
        violations.push(String(err));
      }
    }
    return response;
  };
  return { fetch, succeeded, violations };
}
