/**
 * Process-wide webhook settings, set from the gateway's Config when the webhook service starts
 * (services take no Config argument). Until then the strict default applies.
 */
export const webhookSettings = {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: deliver to loopback/private addresses (local work only). */
  allowPrivateNetworks: false,
  /** Name servers for webhook hosts (`host:port`); null = the system's (/etc/resolv.conf). Tests point it at a local one. */
  dnsServers: null as string[] | null,
};
