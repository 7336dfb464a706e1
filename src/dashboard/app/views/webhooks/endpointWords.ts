import { eventTypeName, formatPercent } from '../../format';
import type { WebhookEndpoint, WebhookEndpointMode } from '../../hooks/webhooks';

/** An endpoint's event filter as the contract spells the types ("*" is every type). */
export const eventsText = (events: string[]) => events.map((e) => (e === '*' ? 'all events' : e.includes('.') ? e : eventTypeName(e))).join(', ');

/** What an endpoint is called: its name, else a push endpoint's URL. */
export const endpointTitle = (e: { url?: string | null; name?: string | null; mode: WebhookEndpointMode }) => e.name || (e.mode === 'PULL' ? 'Pull endpoint' : (e.url ?? 'Endpoint'));

export const MODE_WORDS: Record<WebhookEndpointMode, { word: string; how: string }> = {
  PUSH: { word: 'Push', how: 'the gateway POSTs each event to the URL' },
  PULL: { word: 'Pull', how: 'events wait until your server fetches and acknowledges them' },
};

/** The success rate of the last 24 h in words, with what it counts ("—" when nothing was attempted). */
export function successText(s: WebhookEndpoint['recentSuccess']): { rate: string; detail: string } {
  if (s.rate == null) return { rate: '—', detail: 'nothing attempted in the last 24 h' };
  return { rate: formatPercent(s.rate), detail: `${s.delivered} delivered, ${s.failed} failed` };
}
