// Turns on trace export without changing the service: an OpenTelemetry SDK registered before it
// starts, with `node --import ./otel-setup.js dist/src/cli/main.js serve`. Spans go by OTLP/HTTP to
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (default http://localhost:4318/v1/traces: a Collector, Jaeger,
// Tempo...). (Quoted in docs/operations.md; a test runs the service with it and receives the spans.)
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env['OTEL_SERVICE_NAME'] ?? 'report-store' }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
// Send what is still buffered when the service is asked to stop.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void provider.shutdown());
