/** The kinds of API key (the model stores it; the permission rules below read it). */
export type ApiKeyType = 'secret' | 'publishable' | 'restricted';

/** Resources a restricted key can be granted, each with `read` or `write` (write implies read). */
export const PERMISSION_RESOURCES = [
  'payment_intents',
  'refunds',
  'payment_links',
  'checkout_sessions',
  'webhook_endpoints',
  'events',
  'logs',
  'account',
  'sandbox',
] as const;

export type PermissionResource = (typeof PERMISSION_RESOURCES)[number];
export type Permission = `${PermissionResource}:${'read' | 'write'}`;

/**
 * What an operation needs:
 * - a Permission: secret keys always pass; restricted keys need it (or its `write` twin);
 * - 'any_key': any valid key, publishable included (GET /payment_methods);
 * - 'secret_key': only the account's full secret key (managing API keys).
 */
export type Requirement = Permission | 'any_key' | 'secret_key';

export function isPermission(value: string): value is Permission {
  const [resource, level] = value.split(':');
  return (PERMISSION_RESOURCES as readonly string[]).includes(resource ?? '') && (level === 'read' || level === 'write');
}

export function keyAllows(key: { type: ApiKeyType; permissions: readonly string[] }, need: Requirement): boolean {
  if (need === 'any_key') return true;
  if (key.type === 'publishable') return false;
  if (key.type === 'secret') return true;
  if (need === 'secret_key') return false;
  if (key.permissions.includes(need)) return true;
  const [resource, level] = need.split(':');
  return level === 'read' && key.permissions.includes(`${resource}:write`);
}
