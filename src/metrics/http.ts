import { childCache, CounterCells, HistogramCells, type CounterChild, type HistogramChild } from './cells';
import { register, REQUEST_BUCKETS } from './registry';

const requests = register(new CounterCells('pgw_http_requests_total', 'HTTP requests answered, by operation (openapi.yaml operationId) and status code.', ['operation', 'status']));
const durations = register(
  new HistogramCells('pgw_http_request_duration_seconds', 'Time from a request\'s arrival to its answer\'s last byte, by operation.', ['operation'], REQUEST_BUCKETS),
);

/** One operation's children: its histogram, and a counter per status code it has answered. */
export interface HttpOperationMetrics {
  observe(status: number, seconds: number): void;
}

/**
 * The metrics of requests labelled `operation`: an operationId, or one of the few fixed names of
 * what is not an operation (`graphql`, `unmatched`, `other`). Never a raw path, which would carry ids.
 * Made once per name and kept by the caller (the REST pipeline holds its operation's).
 */
export const httpOperation = childCache((operation: string): HttpOperationMetrics => {
  const duration: HistogramChild = durations.child({ operation });
  const byStatus = childCache((status: number): CounterChild => requests.child({ operation, status: String(status) }));
  return {
    observe(status, seconds) {
      byStatus(status).inc();
      duration.observe(seconds);
    },
  };
});

/** Sockets answered 503 and closed on arrival: HTTP_MAX_CONNECTIONS were open (src/http/httpServer.ts). */
export const connectionRefusedAtCap = register(
  new CounterCells('pgw_http_connections_refused_total', 'Connections answered 503 and closed on arrival because HTTP_MAX_CONNECTIONS sockets were open.', []),
).child({});
