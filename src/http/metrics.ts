// Prometheus metrics on a registry of the app's own (no global registry). Labels carry route
// templates and statuses only: never ids, names or tokens.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { cursorLag, cursorTotal, type Cursor, type EventLog } from '../log/event-log.js';
import { scrapeHead } from './scrape-head.js';
import { hasBrokerFigures, type BrokerFigures } from '../log/capabilities.js';
import type { Projector } from '../projector/projector.js';
import type { ProjectionHealth } from '../projector/health.js';
import type { KeyStore } from '../keys/key-store.js';
import type { TokenReloadFigures } from '../tokens/token-reloader.js';

export interface Metrics {
  readonly registry: Registry;
  /** The text of every series, for a scrape. */
  render(): Promise<string>;
  observeRequest(labels: { method: string; route: string; status: number }, durationSeconds: number): void;
  observeAppend(durationSeconds: number): void;
  /** A write was decided again after its event was void (one more append). */
  observeDecidedAgain(): void;
  /** The head of a report's partition was read before an answer that writes nothing. */
  observeHeadRead(): void;
  /** The erasure figures the command service keeps (keys whose destruction is tried again, content that could not be opened). */
  observeService(service: ErasureFigures): void;
  /** The reloads of the tokens (SIGHUP, a change of the tokens file). */
  observeTokenReloads(reloads: () => TokenReloadFigures): void;
}

/** What the command service tells of erasure. */
export interface ErasureFigures {
  erasuresPending(): number;
  contentUnopened(): number;
  keySweepFailing(): boolean;
}

/** The methods the routes answer (OPTIONS: the 405's Allow); the label of any other is `other`. */
const SERVED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS']);

export interface MetricsDeps {
  readonly log: EventLog;
  readonly keys: KeyStore;
  readonly projector: Projector;
  readonly health: ProjectionHealth;
  /**
   * Whether `nodejs_version_info` (the exact Node version) is among the series: only when /metrics
   * needs a token (REPORTS_METRICS_TOKEN), since the version tells anyone which runtime fixes are missing.
   */
  readonly runtimeVersion?: boolean;
  /** The wall clock, for the age of the newest applied record (records carry wall-clock timestamps). */
  readonly now?: () => number;
}

export function createMetrics({
  log,
  keys,
  projector,
  health,
  runtimeVersion = false,
  now = Date.now,
}: MetricsDeps): Metrics {
  const registry = new Registry();
  /** The rendering the scrapes of this turn of the event loop wait for (render()). */
  let nextRendering: Promise<string> | undefined;
  // The runtime's series (process_*: CPU, memory, file descriptors; nodejs_*: heap, handles,
  // event-loop lag, GC), what a dashboard shows first. They are read when scraped; only the
  // event-loop delay histogram (a timer every 10 ms) and GC durations (an observer of GC events)
  // run in between, and neither runs per request.
  collectDefaultMetrics({ register: registry });
  if (!runtimeVersion) registry.removeSingleMetric('nodejs_version_info');
  const head = scrapeHead(log);
  const fromHead = async (value: (head: Cursor) => number) => {
    const cursor = await head();
    return cursor === undefined ? Number.NaN : value(cursor);
  };
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  /** The series of each method, route and status seen, so a request does not hash its labels twice. */
  const requestSeries = new Map<
    string,
    { count: ReturnType<typeof requests.labels>; latency: ReturnType<typeof latency.labels> }
  >();
  const appendLatency = new Histogram({
    name: 'reports_log_append_duration_seconds',
    help: 'Time until the event log acknowledged an append (durable)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [registry],
  });
  new Gauge({
    name: 'reports_log_head_offset',
    help: 'Offset one past the last record of the event log, summed over partitions',
    registers: [registry],
    async collect() {
      this.set(await fromHead(cursorTotal));
    },
  });
  new Gauge({
    name: 'reports_projected_offset',
    help: 'Offset one past the last record applied to the read model, summed over partitions',
    registers: [registry],
    collect() {
      this.set(cursorTotal(projector.model.cursor));
    },
  });
  new Gauge({
    name: 'reports_projection_lag_events',
    help: 'Records in the event log not yet applied to the read model',
    registers: [registry],
    async collect() {
      this.set(await fromHead((head) => cursorLag(projector.model.cursor, head)));
    },
  });
  new Gauge({
    name: 'reports_projection_lag_seconds',
    help: 'Age of the newest applied record when records wait to be applied, else 0',
    registers: [registry],
    async collect() {
      const last = health.observations().lastRecordTimestampMs;
      const age = last === undefined ? 0 : Math.max(0, (now() - last) / 1000);
      this.set(await fromHead((head) => (cursorLag(projector.model.cursor, head) > 0 ? age : 0)));
    },
  });
  new Counter({
    name: 'reports_log_appends_total',
    help: 'Records this instance appended to the event log',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(log.stats().appends);
    },
  });
  new Counter({
    name: 'reports_log_flushes_total',
    help: 'Flushes that carried the appends (durable writes of the file log, produce requests to Kafka)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(log.stats().flushes);
    },
  });
  // The event log's and the key store's clients each watch the brokers (a create's key write can be the first to find one gone).
  const brokerClients: BrokerFigures[] = [log, keys].filter(hasBrokerFigures);
  if (brokerClients.length > 0) {
    new Counter({
      name: 'reports_kafka_broker_outages_total',
      help: 'Times a Kafka broker became unreachable from this instance, by its event log or its key store (each is logged once, as is its return)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(brokerClients.reduce((sum, client) => sum + client.brokerOutages(), 0));
      },
    });
  }
  new Gauge({
    name: 'reports_projection_stalled',
    help: '1 when records have waited longer than REPORTS_PROJECTION_STALL_MS without the projection applying any',
    registers: [registry],
    collect() {
      this.set(health.verdict().stalled ? 1 : 0);
    },
  });
  new Gauge({
    name: 'reports_read_model_reports',
    help: 'Live reports in the read model',
    registers: [registry],
    collect() {
      this.set(projector.model.reports.size);
    },
  });
  new Counter({
    name: 'reports_projection_invalid_records_total',
    help: 'Records skipped by the projector because they are not valid report events',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(projector.model.counts.invalid);
    },
  });
  const decidedAgain = new Counter({
    name: 'reports_writes_decided_again_total',
    help: 'Writes decided again because the fold voided their event (another write to the report reached the log first); each is one more append',
    registers: [registry],
  });
  const headReads = new Counter({
    name: 'reports_partition_head_reads_total',
    help: "Reads of a report's partition head, so that an answer that writes nothing (404, 409, an unchanged 200) holds every write before the request",
    registers: [registry],
  });
  new Counter({
    name: 'reports_erasures_total',
    help: "Content keys destroyed since start: a deleted report's, or a void create's (its name and tag can no longer be opened)",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(keys.stats().erasures);
    },
  });
  let erasure: ErasureFigures | undefined;
  new Gauge({
    name: 'reports_erasures_pending',
    help: 'Keys of deleted reports whose destruction the key store has not confirmed yet (tried again every second)',
    registers: [registry],
    collect() {
      this.set(erasure?.erasuresPending() ?? 0);
    },
  });
  new Gauge({
    name: 'reports_key_sweep_failing',
    help: "1 while the start's sweep of the keys a crash left in keys.db has failed and waits to be tried again (deletes of absent reports answer 503 meanwhile; the log says why), else 0",
    registers: [registry],
    collect() {
      this.set(erasure?.keySweepFailing() === true ? 1 : 0);
    },
  });
  new Counter({
    name: 'reports_content_unopened_total',
    help: "Times a live report's content could not be opened because its key is missing from the key store (reports verify lists them)",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(erasure?.contentUnopened() ?? 0);
    },
  });
  let tokenReloads: () => TokenReloadFigures = () => ({ reloads: 0, failures: 0, lastSucceeded: true });
  new Counter({
    name: 'reports_token_reloads_total',
    help: 'Reloads of the tokens since start (SIGHUP, a change of the tokens file), failed ones included',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(tokenReloads().reloads);
    },
  });
  new Counter({
    name: 'reports_token_reload_failures_total',
    help: 'Reloads of the tokens that kept the tokens in use because the file could not be read or parsed (the log says why)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(tokenReloads().failures);
    },
  });
  new Gauge({
    name: 'reports_token_reload_last_succeeded',
    help: '0 while the last reload of the tokens failed (the file on disk is not the set in use), else 1',
    registers: [registry],
    collect() {
      this.set(tokenReloads().lastSucceeded ? 1 : 0);
    },
  });
  return {
    registry,
    observeService: (service) => void (erasure = service),
    observeTokenReloads: (reloads) => void (tokenReloads = reloads),
    observeDecidedAgain: () => decidedAgain.inc(),
    observeHeadRead: () => headReads.inc(),
    observeRequest({ method: asked, route, status }, durationSeconds) {
      // The methods the routes serve, any other as one: a label per method Node accepts (34 of them,
      // before any token is checked) made the scrape 35 times larger for good.
      const method = SERVED_METHODS.has(asked) ? asked : 'other';
      const key = `${method} ${route} ${status}`;
      let series = requestSeries.get(key);
      if (series === undefined) {
        // Few combinations exist (routes are patterns, methods five): each is looked up by its labels once.
        const labels = { method, route, status: String(status) };
        series = { count: requests.labels(labels), latency: latency.labels(labels) };
        requestSeries.set(key, series);
      }
      series.count.inc();
      series.latency.observe(durationSeconds);
    },
    observeAppend(durationSeconds) {
      appendLatency.observe(durationSeconds);
    },
    render() {
      // Scrapes that arrive in the same turn of the event loop share one rendering, started after
      // all of them, so each still gets values collected after it arrived. A rendering costs about
      // half a millisecond of CPU and a few hundred KB of garbage: a thousand connections each
      // pipelining GET /metrics made a thousand at once (+270 MB of RSS), now one a turn.
      nextRendering ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        nextRendering = undefined;
        return registry.metrics();
      });
      return nextRendering;
    },
  };
}
