// ReportService.read (GET): the report and its version from the projected state. A live report's
// key found missing is a 500, counted once, unless the report has moved on meanwhile: a delete
// destroys the key once its event is folded, so a read that looked at the report before the delete
// and at the key store after it answers as the state now says (404), never "the key is missing".
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NotFoundError, PreconditionFailedError, UnavailableError, UnopenedContentError } from '../../src/errors.js';
import { LogUnavailableError } from '../../src/log/event-log.js';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.js';
import type { KeyCarrier } from '../../src/log/capabilities.js';
import type { ContentKey, KeyId, KeyStore } from '../../src/keys/key-store.js';
import { Projector } from '../../src/projector/projector.js';
import { MAX_READS } from '../../src/reports/report-reader.js';
import { ReportService } from '../../src/reports/service.js';
import { isSealedReport } from '../../projections/reports.js';
import { parseKeyId } from '../../src/keys/key-store.js';
import { rejection, until } from '../helpers/async.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

interface Context {
  dir: string;
  log: FileLog & KeyCarrier;
  projector: Projector;
  keys: KeyStore;
  service: ReportService;
  /** When set, the service's key reads wait for it before they look. */
  keyGate: Promise<void> | undefined;
  /** Key reads the service began. */
  keyReads: number;
  /** When set, run by each key read before it looks (a write racing the read). */
  beforeKeyRead: (() => Promise<void>) | undefined;
}

const read = suite<Context>('ReportService.read');

read.before.each(async (context) => {
  const { logger } = memoryLogger();
  context.dir = await tempDir('reports-read-');
  context.log = await openFileLog({ dir: context.dir, logger });
  context.keys = context.log.keyStore();
  context.keyGate = undefined;
  context.keyReads = 0;
  context.beforeKeyRead = undefined;
  const keys = context.keys;
  // The service's key store: the real one, whose reads can be held until a test lets them look.
  const gated: KeyStore = Object.assign(Object.create(keys) as KeyStore, {
    async get(id: KeyId): Promise<ContentKey | undefined> {
      context.keyReads += 1;
      await context.keyGate;
      await context.beforeKeyRead?.();
      return keys.get(id);
    },
  });
  context.projector = new Projector({ log: context.log, logger, retryDelayMs: 10 });
  context.projector.start();
  await context.projector.caughtUp();
  const envelope = {
    source: 'urn:report-store:test',
    newId: () => crypto.randomUUID(),
    time: () => new Date().toISOString(),
  };
  context.service = new ReportService({
    keys: gated,
    log: context.log,
    projector: context.projector,
    writeTimeoutMs: 5000,
    logger,
    ...envelope,
  });
});

read.after.each(async ({ projector, keys, service, log, dir }) => {
  service.stop();
  await projector.stop();
  await keys.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

/** Destroys the key of live report `id` behind the service's back (a lost key). */
async function loseKey({ projector, keys }: Context, id: string): Promise<void> {
  const report = projector.model.reports.get(id);
  assert.ok(report !== undefined && isSealedReport(report));
  await keys.destroy([parseKeyId(report.sealed.key)]);
}

read('answers the report and its version', async ({ service }) => {
  await service.create({ id: '1', name: 'one', tag: 't' });
  assert.equal(await service.read('1'), { kind: 'report', report: { name: 'one', tag: 't' }, version: 1 });
});

read(
  'answers 404 to a read that saw the report live, when a delete destroyed its key before the key was read',
  async (context) => {
    const { service } = context;
    await service.create({ id: '2', name: 'doomed' });
    let open!: () => void;
    context.keyGate = new Promise((resolve) => (open = resolve));
    const answer = rejection(service.read('2'));
    // The read looked at the report (live), and waits to read its key.
    await until(() => context.keyReads === 1, 'the read to ask for the key');
    context.keyGate = undefined;
    await service.delete('2');
    open();
    assert.instance(await answer, NotFoundError);
    assert.is(service.contentUnopened(), 0, 'a key destroyed by a delete is not a missing key');
  },
);

read('answers 500 naming the report whose key is missing, and counts it once', async (context) => {
  const { service } = context;
  await service.create({ id: '3', name: 'keyless' });
  await loseKey(context, '3');
  const error = await rejection(service.read('3'));
  assert.instance(error, UnopenedContentError);
  assert.is((error as UnopenedContentError).status, 500);
  assert.match((error as Error).message, /report 3 cannot be opened: its key is missing/);
  assert.is(service.contentUnopened(), 1);
});

read(
  'answers 503, not 500, when the key store cannot answer now (a read, and a create that must compare content)',
  async (context) => {
    const { service } = context;
    await service.create({ id: '5', name: 'kept' });
    context.beforeKeyRead = () =>
      Promise.reject(new LogUnavailableError('the key topic t.keys cannot be read: its leader is in doubt'));
    const read = await rejection(service.read('5'));
    assert.instance(read, UnavailableError);
    assert.is((read as UnavailableError).status, 503);
    assert.not.match((read as Error).message, /t\.keys/, 'what the adapter said is logged, not sent');
    const again = await rejection(service.create({ id: '5', name: 'kept' }));
    assert.instance(again, UnavailableError);
    assert.is(service.contentUnopened(), 0, 'an unavailable key store is no missing key');
    context.beforeKeyRead = undefined;
    assert.equal(await service.read('5'), { kind: 'report', report: { name: 'kept' }, version: 1 });
  },
);

read('answers If-None-Match with the version alone, opening nothing', async (context) => {
  const { service } = context;
  await service.create({ id: '4', name: 'cached' });
  assert.equal(await service.read('4', { ifNoneMatch: { kind: 'versions', versions: [1] } }), {
    kind: 'not-modified',
    version: 1,
  });
  assert.is(context.keyReads, 0);
  assert.instance(
    await rejection(service.read('4', { ifMatch: { kind: 'versions', versions: [3] } })),
    PreconditionFailedError,
  );
});

read(`answers 503 once the report changed under each of ${MAX_READS} reads in a row`, async (context) => {
  const { service } = context;
  await service.create({ id: '5', name: 'busy' });
  // Each key read finds the key it was asked for destroyed: the report was deleted and created again meanwhile.
  const recreate = async (): Promise<void> => {
    context.beforeKeyRead = undefined;
    await service.delete('5');
    await service.create({ id: '5', name: 'busy' });
    context.beforeKeyRead = recreate;
  };
  context.beforeKeyRead = recreate;
  const error = await rejection(service.read('5'));
  assert.instance(error, UnavailableError);
  assert.match((error as Error).message, new RegExp(`report 5 changed each of the ${MAX_READS} times it was read`));
  assert.is(context.keyReads, MAX_READS, 'each read opened a key once');
  assert.is(service.contentUnopened(), 0);
});

read.run();
