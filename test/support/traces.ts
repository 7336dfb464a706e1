import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccount, type TestAccount } from './accounts';
import { spawnGateway, type GatewayProcess } from './processes';
import { startReceiver, type Receiver } from './receiver';

/**
 * An OTLP/HTTP traces receiver on loopback: a gateway started with OTEL_EXPORTER_OTLP_ENDPOINT = `url`
 * sends its spans here (JSON, as @opentelemetry/exporter-trace-otlp-http sends them), and `spans`
 * holds every one received so far.
 */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: { stringValue?: string; intValue?: number | string } }>;
  links?: Array<{ traceId: string; spanId: string }>;
  status?: { code?: number; message?: string };
}

export interface TraceCollector {
  url: string;
  spans: OtlpSpan[];
  close(): Promise<void>;
}

export async function startTraceCollector(): Promise<TraceCollector> {
  const spans: OtlpSpan[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const parsed = JSON.parse(body) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };
        for (const rs of parsed.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface TracedGateway {
  collector: TraceCollector;
  receiver: Receiver;
  gateway: GatewayProcess;
  /** A fresh account on that gateway. */
  account: TestAccount;
  stop(): Promise<void>;
}

/**
 * A gateway process with tracing on, its spans going to a TraceCollector of the test (batches every
 * 200 ms), a webhook receiver it may deliver to, and an account.
 */
export async function startTracedGateway(accountName: string, env: Record<string, string> = {}): Promise<TracedGateway> {
  const collector = await startTraceCollector();
  const receiver = await startReceiver();
  const gateway = await spawnGateway('', {
    DATA_DIR: '',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    ...env,
  });
  const account = await createAccount(gateway.url, accountName);
  return {
    collector,
    receiver,
    gateway,
    account,
    async stop() {
      await gateway.stop();
      await receiver.close();
      await collector.close();
    },
  };
}
