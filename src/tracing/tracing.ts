import type { Attributes, Context, Span, SpanKind, Tracer } from '@opentelemetry/api';
import { setLogMixin } from '../logger';

/**
 * OpenTelemetry traces (docs/operations.md, "Traces"), off unless the standard OTEL_* variables ask for them;
 * off loads no SDK and installs nothing. What crosses time and processes carries a `traceparent`, so one
 * trace holds a request, the timers it set and the webhooks that followed. More:
 * docs/decisions/notes/edge.md, "Traces".
 */
type Api = typeof import('@opentelemetry/api');

interface Running {
  api: Api;
  tracer: Tracer;
  provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> };
}

// eslint-disable-next-line no-restricted-syntax -- OpenTelemetry's provider is registered globally: one per thread
let running: Running | null = null;

type Env = Record<string, string | undefined>;

export function tracingRequested(env: Env): boolean {
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter === 'none' || env.OTEL_SDK_DISABLED === 'true') return false;
  return Boolean(exporter || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

export function tracingOn(): boolean {
  return running !== null;
}

/**
 * Starts the SDK when the environment asks for it (once per thread: the background thread starts its
 * own). Spans go to OTLP/HTTP (the exporter reads the OTEL_EXPORTER_OTLP_* variables itself), or to
 * standard output with OTEL_TRACES_EXPORTER=console.
 */
export async function startTracing(env: Env, thread = 'http'): Promise<boolean> {
  if (running || !tracingRequested(env)) return running !== null;
  const api = await import('@opentelemetry/api');
  const { NodeTracerProvider, BatchSpanProcessor, ConsoleSpanExporter } = await import('@opentelemetry/sdk-trace-node');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const exporter =
    env.OTEL_TRACES_EXPORTER?.trim() === 'console'
      ? new ConsoleSpanExporter()
      : new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME?.trim() || 'payment-gateway', 'pgw.thread': thread }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // AsyncLocalStorage context and the W3C trace-context propagator, as the SDK's defaults.
  provider.register();
  running = { api, tracer: api.trace.getTracer('payment-gateway'), provider };
  setLogMixin(() => {
    const span = api.trace.getActiveSpan();
    if (!span) return {};
    const { traceId, spanId } = span.spanContext();
    return { trace_id: traceId, span_id: spanId };
  });
  return true;
}

/** Sends the spans still buffered and stops the SDK (a gateway's stop). */
export async function stopTracing(): Promise<void> {
  const r = running;
  if (!r) return;
  running = null;
  setLogMixin(null);
  await r.provider.shutdown().catch(() => undefined);
}

export interface SpanOptions {
  kind?: 'server' | 'client' | 'internal';
  attributes?: Attributes;
  /** The parent, as a W3C traceparent (a stored one); default the active span. */
  parent?: string | null;
  /** Spans this one follows from, as traceparents (the request that scheduled a timer). */
  links?: ReadonlyArray<string | null | undefined>;
}

const KINDS: Record<NonNullable<SpanOptions['kind']>, SpanKind> = { internal: 0, server: 1, client: 2 };

function contextOf(r: Running, traceparent: string): Context {
  return r.api.propagation.extract(r.api.ROOT_CONTEXT, { traceparent });
}

/**
 * Runs `fn` in a new span, ended with `fn`'s outcome (an exception is recorded and sets the error
 * status). With tracing off it is `fn(undefined)`; hot paths test tracingOn() first instead.
 */
export async function inSpan<T>(name: string, opts: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  const r = running;
  if (!r) return fn(undefined);
  const { api } = r;
  const parent = opts.parent ? contextOf(r, opts.parent) : api.context.active();
  const links = (opts.links ?? []).filter((l): l is string => Boolean(l)).map((l) => ({ context: api.trace.getSpanContext(contextOf(r, l))! })).filter((l) => l.context);
  const span = r.tracer.startSpan(name, { kind: KINDS[opts.kind ?? 'internal'], attributes: opts.attributes, links }, parent);
  try {
    return await api.context.with(api.trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: 2, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** The active span as a W3C traceparent, to store beside work that runs later (undefined: none, or off). */
export function currentTraceParent(): string | undefined {
  const r = running;
  if (!r) return undefined;
  const carrier: Record<string, string> = {};
  r.api.propagation.inject(r.api.context.active(), carrier);
  return carrier.traceparent;
}

/** Adds the active span's `traceparent` (and `tracestate`) to outgoing request headers. */
export function injectTraceHeaders(headers: Record<string, string>): void {
  const r = running;
  if (r) r.api.propagation.inject(r.api.context.active(), headers);
}

/** The span of the request being served, named by its route template and operation once they are known. */
export function nameRequestSpan(method: string, route: string, operationId: string): void {
  const span = running?.api.trace.getActiveSpan();
  if (!span) return;
  span.updateName(`${method} ${route}`);
  span.setAttributes({ 'http.route': route, 'pgw.operation_id': operationId });
}

/** The low-level handle for the middleware and the command listener, which start and end spans apart. */
export function tracingInternals(): Running | null {
  return running;
}
