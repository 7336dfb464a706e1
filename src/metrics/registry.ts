import { isMainThread } from 'node:worker_threads';
import { AggregatorRegistry, collectDefaultMetrics, Registry, type Metric } from 'prom-client';

/**
 * The gateway's metrics registry (GET /metrics, src/rest/metricsRoutes.ts). One per thread: the
 * metrics describe the process, as Prometheus sees it, not one gateway object (tests start several
 * gateways in one process; each file's worker has its own).
 *
 * The process and Node.js metrics (CPU, memory, event loop lag, GC) are collected in the HTTP thread
 * only: the background thread's CPU and memory are the same process's, and summed they would count twice.
 */
// eslint-disable-next-line no-restricted-syntax -- one prom-client registry per process: /metrics scrapes the process
export const registry = new Registry();
if (isMainThread) {
  collectDefaultMetrics({ register: registry });
  // Gauges named like counters, which `promtool check metrics` refuses; their by-type series
  // (nodejs_active_handles{type}, …) stay and sum to the same number.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
}

/** Any object with prom-client's metric shape (`get()`, name, help, type, aggregator). */
export function register<M extends { name: string; get(): Promise<unknown> }>(metric: M): M {
  registry.registerMetric(metric as unknown as Metric);
  return metric;
}

/** Buckets (s) that resolve 10 ms to 60 s: timer lateness and webhook lag, the ones alerts read. */
export const LATENESS_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;
/** Request durations (s): 1 ms to 10 s. */
export const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
/** Database command durations (s): 0.25 ms to 5 s. */
export const COMMAND_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5] as const;

/** prom-client's JSON form of a registry (`getMetricsAsJSON()`), as posted between threads. */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

type PeerMetrics = () => Promise<MetricsJson>;
// eslint-disable-next-line no-restricted-syntax -- the background thread's metrics, merged into the process's /metrics
let peer: PeerMetrics | null = null;

/**
 * The background thread's metrics, asked for at each scrape (src/background/thread.ts sets it while
 * the thread runs): what its timers and webhooks observed is merged into this thread's answer.
 */
export function setPeerMetrics(read: PeerMetrics | null): void {
  peer = read;
}

/** This thread's metrics as prom-client's JSON (what the background thread answers the HTTP thread). */
export function metricsJson(): Promise<MetricsJson> {
  return registry.getMetricsAsJSON();
}

/** The Prometheus text of this thread's metrics, merged with the background thread's when it runs. */
export async function metricsText(): Promise<{ contentType: string; text: string }> {
  const read = peer;
  if (!read) return { contentType: registry.contentType, text: await registry.metrics() };
  // A background thread that does not answer in time leaves its part out of this scrape (the counters
  // are cumulative: the next scrape has them), rather than failing it.
  const [own, theirs] = await Promise.all([registry.getMetricsAsJSON(), read().catch(() => [])]);
  const merged = AggregatorRegistry.aggregate([own, theirs]);
  return { contentType: registry.contentType, text: await merged.metrics() };
}
