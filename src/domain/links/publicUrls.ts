import { loadConfig } from '../../config';

/**
 * PUBLIC_BASE_URL, from which link and checkout URLs are built. The gateway sets it from its Config when
 * it builds the pages router (createPagesRouter); until then it falls back to the environment. One value
 * per process: two gateways with different public URLs in one process would share the last one set.
 */
let configured: string | undefined;

export function configurePublicBaseUrl(url: string): void {
  configured = url.replace(/\/+$/, '');
}

export function publicBaseUrl(): string {
  configured ??= loadConfig().publicBaseUrl;
  return configured;
}
