// autocannon 9 ships no types and there is no @types/autocannon: the part of its API the bench uses.
declare module 'autocannon' {
  export interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  export interface Request extends RequestParams {
    /** Called before every request is built; returns the request to send (a new id each time). */
    setupRequest?: (request: RequestParams, context: Record<string, unknown>) => RequestParams;
  }

  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    /** Requests to send in all, instead of a duration. */
    amount?: number;
    /** Seconds before a request counts as a timeout (and an error). */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    requests?: Request[];
    title?: string;
  }

  /** hdr-histogram-percentiles-obj. */
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    /** Only on `requests` (completed requests) and `throughput`. */
    total?: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
  }

  export interface Result {
    title?: string;
    url: string;
    /** Requests per second, one sample a second. */
    requests: Histogram;
    /** Milliseconds. */
    latency: Histogram;
    throughput: Histogram;
    /** Seconds. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Instance extends PromiseLike<Result> {
    /** Every response; `responseTimeMs` has sub-millisecond precision. */
    on(
      event: 'response',
      listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void,
    ): this;
    stop(): void;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}
