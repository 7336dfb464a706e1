/**
 * What the merchant's server writes into the checkout page (a JSON block, read by page.ts): where the
 * gateway is, the payment, and the client token that reads that one payment. Never a secret key.
 */
export interface CheckoutConfig {
  /** The gateway's root URL, for the SSE stream and GraphQL over SSE (`POST <gatewayUrl>/graphql`). */
  gatewayUrl: string;
  /** The gateway's GraphQL WebSocket URL (ws:// or wss://). */
  graphqlWsUrl: string;
  paymentId: string;
  /** ct_test_…: reads this payment's public view, nothing else, until it expires. */
  clientToken: string;
  /** The channel the page tries first (README, "Choosing the transport"). */
  transport: Transport;
}

/**
 * `websocket`: graphql-ws, then GraphQL over SSE, then the REST stream; `graphql-sse`: GraphQL over SSE,
 * then the REST stream; `sse`: the REST stream only.
 */
export const TRANSPORTS = ['websocket', 'graphql-sse', 'sse'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** The status page URL's `?transport=`; anything else (or nothing) is the default, `websocket`. */
export function transportOf(value: unknown): Transport {
  return TRANSPORTS.find((t) => t === value) ?? 'websocket';
}
