import { ApiError } from '../../errors';
import { toWebhookDeliveryResource, type WebhookDeliveryResource } from './webhookSerializer';
import { WebhookDeliveryModel, type WebhookDeliveryRecord } from './webhookDeliveryModel';

/**
 * A delivery with the endpoint it goes to. REST lists deliveries under their endpoint's path; a view
 * of one payment's deliveries across endpoints (the dashboard's payment page, GraphQL
 * `PaymentIntent.webhookDeliveries`) names the endpoint, which a retry needs.
 */
export type EndpointDelivery = WebhookDeliveryResource & { endpoint_id: string };

export function toEndpointDelivery(d: WebhookDeliveryRecord): EndpointDelivery {
  return { ...toWebhookDeliveryResource(d), endpoint_id: d.endpoint_id };
}

/** One delivery of the account, by id (GraphQL's `node`): 404 for an id the account has no delivery with. */
export async function getEndpointDelivery(accountId: string, id: string): Promise<EndpointDelivery> {
  const doc = await WebhookDeliveryModel.findOne({ _id: id, account_id: accountId }).lean();
  if (!doc) throw ApiError.notFound('webhook delivery', id);
  return toEndpointDelivery(doc);
}

/**
 * The deliveries of each payment's events to any of the account's endpoints, in event order (oldest
 * first, then by id), as `GET /webhook_endpoints/{id}/deliveries` shows them. One query for all the
 * payments (index `payment_id, event_seq`); endpoints deleted with their deliveries are gone from it.
 */
export async function listDeliveriesForPayments(accountId: string, paymentIds: readonly string[]): Promise<Map<string, EndpointDelivery[]>> {
  const docs = await WebhookDeliveryModel.find({ account_id: accountId, payment_id: { $in: [...paymentIds] } })
    .sort({ event_seq: 1, _id: 1 })
    .lean<WebhookDeliveryRecord[]>();
  const byPayment = new Map<string, EndpointDelivery[]>(paymentIds.map((id) => [id, []]));
  for (const d of docs) byPayment.get(d.payment_id ?? '')?.push(toEndpointDelivery(d));
  return byPayment;
}
