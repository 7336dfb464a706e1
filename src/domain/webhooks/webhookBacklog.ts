import { countMatching } from '../../db/driverCollection';
import { WebhookDeliveryModel } from './webhookDeliveryModel';

const COUNT_LIMIT = 1_000_000;

/**
 * pgw_webhook_backlog: deliveries neither delivered nor dead-lettered. Two counts, each on a partial
 * index that holds only such deliveries: PENDING (first attempt to come) by `lease_until`, RETRYING by
 * `next_attempt_at`.
 */
export async function countWebhookBacklog(): Promise<number> {
  const [pending, retrying] = await Promise.all([
    countMatching(WebhookDeliveryModel, { state: 'PENDING', lease_until: { $gte: 0 } }, COUNT_LIMIT),
    countMatching(WebhookDeliveryModel, { state: 'RETRYING', next_attempt_at: { $gte: new Date(0) } }, COUNT_LIMIT),
  ]);
  return pending + retrying;
}
