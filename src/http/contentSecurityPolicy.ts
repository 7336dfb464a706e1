/**
 * The gateway's two Content-Security-Policies, here under the protocols so that REST's prologue, the
 * payment pages and the dashboard share them without importing each other. GraphiQL (src/graphql/
 * graphiql.ts) and the API docs (src/rest/systemRoutes.ts) have policies of their own.
 */

/**
 * The policy for everything that is not an HTML page (JSON, the event streams, SVG, YAML, scripts):
 * such an answer must never run or load anything, nor be framed, even when a browser is tricked into
 * rendering it as a document (an SVG QR code opened directly, a JSON error echoing input). REST's
 * prologue sets it on every answer (src/rest/securityHeaders.ts); HTML pages replace it with theirs.
 */
export const NON_PAGE_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * The gateway's own HTML pages: the payment-link and checkout pages, the root page and the dashboard
 * app. They may load and contact only their own origin: their script and stylesheet, the JSON routes,
 * the event streams, GraphQL over fetch and WebSocket (connect-src 'self' covers ws:/wss: on the same
 * host and port); QR codes as data: images. No inline code, no third party, no framing.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
