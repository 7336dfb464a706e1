import type { PgwClient } from '@pgw/client';
import { PAGE_SIZE, type GatewayEvent } from '../eventSocket';

/** The account's newest events (newest first), as REST lists them: the "already happened" mark. */
export async function baselineEvents(api: PgwClient): Promise<GatewayEvent[]> {
  const { data } = await api.GET('/events', { params: { query: { limit: PAGE_SIZE } } });
  return data.data;
}
