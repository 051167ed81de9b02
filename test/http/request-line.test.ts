// The access-log line is built by hand for speed; it must stay the line pino writes itself.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createRequestLine } from '../../src/http/request-line.js';
import { createLogger } from '../../src/logger.js';

function capture(): { write(line: string): void; lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (line) => void lines.push(line) };
}

/** The time is the only field the two paths may set differently. */
const withoutTime = (line: string | undefined) => (line ?? '').replace(/"time":\d+,/, '"time":0,');

const requestLine = suite('request line');

requestLine('is the line pino writes for the same fields, key order included', () => {
  const out = capture();
  const logger = createLogger('info', out);
  const fields = { method: 'POST', route: '/reports/:id', status: 204, durationMs: 1.234 };
  createRequestLine(logger)(fields);
  logger.info(fields, 'request');
  assert.is(out.lines.length, 2);
  assert.is(withoutTime(out.lines[0]), withoutTime(out.lines[1]));
  assert.ok(out.lines[0]?.endsWith('\n'));
});

requestLine('carries a child logger\'s bindings and quotes an odd method as JSON', () => {
  const out = capture();
  const logger = createLogger('info', out).child({ instance: 'a"b' });
  const fields = { method: 'M"\\X', route: 'unmatched', status: 405, durationMs: 0 };
  const line = createRequestLine(logger);
  line(fields);
  line(fields);
  logger.info(fields, 'request');
  assert.is(withoutTime(out.lines[0]), withoutTime(out.lines[2]));
  assert.equal(JSON.parse(out.lines[1] ?? ''), { ...JSON.parse(out.lines[1] ?? ''), instance: 'a"b', method: 'M"\\X', msg: 'request' });
});

requestLine('writes nothing when the level is above info', () => {
  const out = capture();
  createRequestLine(createLogger('warn', out))({ method: 'GET', route: '/healthz', status: 200, durationMs: 0.1 });
  assert.equal(out.lines, []);
});

requestLine.run();
