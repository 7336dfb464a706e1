import type { AttemptLogEntry } from './webhookDeliveryModel';
/**
 * Why a webhook attempt failed, in words an integrator recognises (REST `last_error`, GraphQL
 * `lastError`, the dashboard's timeline): the network error's code, not Node's message, which names
 * internals (`connect ECONNREFUSED 10.0.0.5:8080`) and changes between versions.
 */
const BY_CODE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'DNS lookup failed',
  EAI_AGAIN: 'DNS lookup failed',
  ETIMEDOUT: 'connection timed out',
  HPE_INVALID_CONSTANT: 'invalid HTTP response',
  HPE_INVALID_STATUS: 'invalid HTTP response',
  HPE_INVALID_HEADER_TOKEN: 'invalid HTTP response',
};

/** Certificate problems carry OpenSSL's codes; the common ones in words, the others by their code. */
const TLS_BY_CODE: Record<string, string> = {
  // An https URL whose server speaks plain HTTP (or no TLS Node accepts).
  EPROTO: 'TLS handshake failed',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS certificate not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host name',
};
const TLS_CODE = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/;

export function networkFailure(err: unknown): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
  const known = BY_CODE[code] ?? TLS_BY_CODE[code];
  if (known) return known;
  if (TLS_CODE.test(code)) return `TLS handshake failed: ${code.toLowerCase().replaceAll('_', ' ')}`;
  return 'connection failed';
}

export function timedOut(timeoutMs: number): string {
  return `timed out after ${timeoutMs / 1000} s`;
}

/** The last_error of an attempt: null on a 2xx; the status when there was one, else the network's reason. */
export function attemptError(status: number, error: string | undefined): string | null {
  if (status >= 200 && status < 300) return null;
  if (status > 0) return `HTTP ${status}`;
  return error ?? 'no response';
}

/** An attempt as a delivery's `attempt_log` keeps it (webhookDeliveryModel.ts). */
export function attemptEntry(a: { at: Date; status: number; ms: number; error?: string }): AttemptLogEntry {
  return { at: a.at, status: a.status, ms: a.ms, error: attemptError(a.status, a.error) };
}
