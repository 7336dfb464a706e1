/**
 * The key in an `Authorization` value: `Bearer <key>` as over HTTP. Over WebSocket
 * (`connectionParams.authorization`) the bare key is accepted too, since browsers' WebSocket clients
 * cannot send headers and people paste the key alone.
 */
export function bearerSecret(value: unknown, allowBare = false): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
  if (match) return match[1];
  return allowBare && /^\S+$/.test(value.trim()) ? value.trim() : undefined;
}
