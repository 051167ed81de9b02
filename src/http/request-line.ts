// The access log: one line per request. The line is exactly the one pino writes for
// `logger.info({ method, route, status, durationMs }, 'request')`, built in one template and
// handed to the logger's destination: at one line per request, pino's general path (a
// serializer per key, redaction, a property walk) cost more than everything else in the line.
import { pino, type DestinationStream, type Logger } from 'pino';

export interface RequestFields {
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly durationMs: number;
}

export type RequestLine = (fields: RequestFields) => void;

/** Methods and route templates come from a small set: each is quoted once. */
function quoter(): (text: string) => string {
  const quoted = new Map<string, string>();
  return (text) => {
    let json = quoted.get(text);
    if (json === undefined) {
      json = JSON.stringify(text);
      // Clients choose the method: a flood of made-up ones must not grow the cache without bound.
      if (quoted.size < 256) quoted.set(text, json);
    }
    return json;
  };
}

export function createRequestLine(logger: Logger): RequestLine {
  const fields = logger as unknown as Record<symbol, unknown>;
  const stream = fields[pino.symbols.streamSym] as DestinationStream | undefined;
  const bindings = fields[pino.symbols.chindingsSym];
  const level = logger.levels.values['info'];
  // A logger that is not a plain pino one (none in this service) gets the general path.
  if (typeof stream?.write !== 'function' || typeof bindings !== 'string' || level === undefined) return (line) => logger.info(line, 'request');
  const quote = quoter();
  return ({ method, route, status, durationMs }) => {
    if (!logger.isLevelEnabled('info')) return;
    stream.write(`{"level":${level},"time":${Date.now()}${bindings},"method":${quote(method)},"route":${quote(route)},"status":${status},"durationMs":${durationMs},"msg":"request"}\n`);
  };
}
