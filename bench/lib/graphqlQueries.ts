/** The GraphQL rows' queries (bench/run.ts), also sent by bench/profile/fixedLoad.ts. */

/**
 * The payment detail page in one query, as the dashboard sends it (connections, a page of 20 each): the
 * intent, its refunds and its events, every field of each,
 * and each event's `data` also as its typed object (paymentIntent, refund, checkoutSession) with every
 * field. Left out: the links back to the intent (`Refund.paymentIntent`, `CheckoutSession.paymentIntent`),
 * which the page already has and the cost limit prices as a cycle, and `webhookDeliveries` (another view).
 */
const INTENT_FIELDS = `id amount currency paymentMethod status failureCode customer { mobile } merchantReference
    reference { entity number expiresAt } amountRefunded fee feeVersion apiKeyId metadata livemode createdAt updatedAt`;
const REFUND_FIELDS = 'id paymentIntentId amount status livemode createdAt updatedAt';
const CHECKOUT_SESSION_FIELDS = 'id url amount currency methods status paymentIntentId merchantReference successUrl cancelUrl expiresAt livemode createdAt';
export const GRAPHQL_DETAIL_QUERY = `query PaymentDetail($id: ID!) {
  paymentIntent(id: $id) {
    ${INTENT_FIELDS}
    refundsConnection(first: 20) { nodes { ${REFUND_FIELDS} } pageInfo { hasNextPage endCursor } }
    eventsConnection(first: 20) {
      nodes {
        id type livemode createdAt data
        paymentIntent { ${INTENT_FIELDS} }
        refund { ${REFUND_FIELDS} }
        checkoutSession { ${CHECKOUT_SESSION_FIELDS} }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;
/** One intent with what `GET /v1/payment_intents/{id}` answers (REST's `object` has no GraphQL field). */
export const GRAPHQL_ONE_QUERY = `query Intent($id: ID!) { paymentIntent(id: $id) { ${INTENT_FIELDS} } }`;
