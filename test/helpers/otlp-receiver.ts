// A minimal OTLP/HTTP trace receiver on 127.0.0.1:0 (JSON encoding, what the OTLP/HTTP exporter
// sends): enough for a test to see the spans a process exported, with their resource.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly kind: number;
  readonly serviceName: string | undefined;
}

interface KeyValue {
  key: string;
  value: { stringValue?: string };
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { spans?: Omit<ReceivedSpan, 'serviceName'>[] }[];
  }[];
}

export interface OtlpReceiver {
  /** The value for OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. */
  readonly endpoint: string;
  spans(): readonly ReceivedSpan[];
  /** Resolves once a span matching `matches` has arrived (polling; the test's own timeout bounds it). */
  waitFor(matches: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8');
      const parsed = JSON.parse(text) as ExportRequest;
      for (const resourceSpans of parsed.resourceSpans ?? []) {
        const serviceName = resourceSpans.resource?.attributes?.find((a) => a.key === 'service.name')?.value
          .stringValue;
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? []) received.push({ ...span, serviceName });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/v1/traces`,
    spans: () => received,
    async waitFor(matches, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.find(matches);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`no matching span arrived; got ${received.map((s) => s.name).join(', ') || 'none'}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
