import type { Config } from '../config';
import { webhookTargetPolicy, type WebhookTargetPolicy } from '../domain/webhooks/targetResolver';

/**
 * What handlers need of their own gateway's configuration: the public base URL that link and checkout
 * URLs start with, and where webhooks may go. Each protocol builds it from the Config src/server.ts gave
 * it (REST's createApp, GraphQL's context) and passes it to execute; nothing reads a process-wide
 * setting, so two gateways in one process answer each with its own.
 */
export interface GatewaySettings {
  /** PUBLIC_BASE_URL, no trailing slash (server.ts sets the port actually served when PORT=0). */
  publicBaseUrl: string;
  webhookTargets: WebhookTargetPolicy;
}

export function gatewaySettings(config: Pick<Config, 'publicBaseUrl' | 'webhookAllowPrivateNetworks'>): GatewaySettings {
  return { publicBaseUrl: config.publicBaseUrl, webhookTargets: webhookTargetPolicy(config) };
}
