/**
 * What the merchant's server writes into the checkout page (a JSON block, read by page.ts): where the
 * gateway is, the payment, and the client token that reads that one payment. Never a secret key.
 */
export interface CheckoutConfig {
  /** The gateway's root URL, for the SSE stream. */
  gatewayUrl: string;
  /** The gateway's GraphQL WebSocket URL (ws:// or wss://). */
  graphqlWsUrl: string;
  paymentId: string;
  /** ct_test_…: reads this payment's public view, nothing else, until it expires. */
  clientToken: string;
}
