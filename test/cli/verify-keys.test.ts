// `reports verify` on sealed content: every live report's key is in the key store and opens its
// content. A live report whose key is missing (lost, or another producer's event), a key that does
// not open its box, or a key whose digest is not its content's exits 1, each named on stderr by
// report id and key id and never by content, and counted in --json; a deleted report's destroyed
// key is no problem. On the file log and on Kafka.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeEvent } from '../../projections/codec.js';
import type { Env } from '../../src/config.js';
import { sealContent } from '../../projections/sealing.js';
import { keyIdText } from '../../src/keys/key-store.js';
import { slotOfKeyId, slotPosition } from '../../src/keys/key-slots.js';
import { openFileLog } from '../../src/log/file/file-log.js';
import { lines, reports } from '../helpers/cli.js';
import { basedOn, created, deleted } from '../helpers/events.js';
import { appendToFileLog } from '../helpers/file-history.js';
import { kafkaEnv, uniqueTopic, withAdmin, withKafka } from '../helpers/kafka.js';
import { digestOf } from '../helpers/kafka-keys.js';
import { appendSealedToFileLog, appendSealedToTopic, sealedCreate } from '../helpers/sealed-history.js';
import { memoryLogger, tempDir } from '../helpers/server.js';

interface ContentFindings {
  readonly ok: boolean;
  readonly problems: number;
  readonly sealedReports: number;
  readonly unopenedReports: number;
  readonly first?: { readonly position: string; readonly reason: string };
}

const verify = suite<{ dir: string }>('reports verify: sealed content on the file log');

verify.before.each(async (context) => {
  context.dir = await tempDir('reports-verify-keys-');
});
verify.after.each(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

const run = async (env: Env) => {
  const [text, json] = [await reports(['verify'], { env }), await reports(['verify', '--json'], { env })];
  return { ...text, findings: JSON.parse(json.stdout) as ContentFindings };
};

verify(
  "a deleted report's destroyed key is no problem; plain reports beside sealed ones need none",
  async ({ dir }) => {
    await appendToFileLog(dir, [created('9', 'plain')]);
    await appendSealedToFileLog(dir, [created('1', 'kept'), created('2', 'deleted'), deleted('2')], (keys, [, gone]) =>
      keys.destroy([gone?.id ?? Buffer.alloc(0)]),
    );
    const { code, stdout, findings } = await run({ REPORTS_DATA_DIR: dir });
    assert.is(code, 0);
    assert.is(stdout, 'OK: 4 records, 0 void events, 1 live sealed report opened with its key\n');
    assert.equal([findings.ok, findings.sealedReports, findings.unopenedReports], [true, 1, 0]);
  },
);

verify(
  'a live report whose key is missing exits 1, naming the report and the key id, never its content',
  async ({ dir }) => {
    const sealed = await appendSealedToFileLog(
      dir,
      [created('1', 'kept'), created('2', 'key lost', 'tagged')],
      (keys, [, lost]) => keys.destroy([lost?.id ?? Buffer.alloc(0)]),
    );
    const keyId = keyIdText(sealed[1]?.id ?? Buffer.alloc(0));
    const { code, stdout, stderr, findings } = await run({ REPORTS_DATA_DIR: dir });
    assert.is(code, 1);
    assert.is(
      stdout,
      `FAILED: 1 problem in 2 records; first at report 2: live report 2: its content key ${keyId} is not in the key store, so its name and tag cannot be read (a lost key, or another producer's event)\n`,
    );
    assert.equal(lines(stderr), [
      `live report 2: its content key ${keyId} is not in the key store, so its name and tag cannot be read (a lost key, or another producer's event)`,
    ]);
    assert.equal(
      [findings.ok, findings.problems, findings.sealedReports, findings.unopenedReports, findings.first?.position],
      [false, 1, 2, 1, 'report 2'],
    );
    assert.not.match(stdout + stderr, 'key lost');
  },
);

verify(
  "a key that does not open its box, and a key whose digest is not its content's, exit 1 each",
  async ({ dir }) => {
    const log = await openFileLog({ dir, logger: memoryLogger().logger });
    try {
      const store = log.keyStore();
      const { event: moved, key: movedKey } = sealedCreate(created('3', 'sealed for no version'), store);
      const wrongDigest = store.mint(digestOf('something else'));
      const sealed = sealContent({ name: 'right' }, keyIdText(wrongDigest.id), wrongDigest.secret, { id: '4' });
      await log.append([
        { key: '3', value: encodeEvent(basedOn(moved, 0)), contentKey: movedKey },
        { key: '4', value: encodeEvent({ ...created('4', ''), data: { id: '4', sealed } }), contentKey: wrongDigest },
      ]);
    } finally {
      await log.close();
    }
    const { code, stderr, findings } = await run({ REPORTS_DATA_DIR: dir });
    assert.is(code, 1);
    assert.match(stderr, /^live report 3: its content key \S+ does not open its content/m);
    assert.match(stderr, /^live report 4: the content digest kept with key \S+ is not that of the content it opens/m);
    assert.equal([findings.problems, findings.sealedReports, findings.unopenedReports], [2, 2, 1]);
  },
);

verify(
  'a damaged slot of a key in the last batch: the batch is read as the server keeps it, and the damage named',
  async ({ dir }) => {
    await appendSealedToFileLog(dir, [created('1', 'first batch')]);
    const [damaged] = await appendSealedToFileLog(dir, [created('2', 'its slot damaged'), created('3', 'sound')]);
    // One byte of report 2's secret flipped: the slot fails its check.
    const slot = slotOfKeyId(damaged?.id ?? Buffer.alloc(0)) as number;
    const path = join(dir, 'keys.db');
    const bytes = await readFile(path);
    const at = slotPosition(slot) + 10;
    bytes[at] = (bytes[at] as number) ^ 0xff;
    await writeFile(path, bytes);
    const { code, findings } = await run({ REPORTS_DATA_DIR: dir });
    assert.is(code, 1);
    assert.equal([findings.problems, findings.sealedReports, findings.unopenedReports], [1, 3, 1]);
    assert.match(findings.first?.position ?? '', 'report 2');
  },
);

verify('names the first 100 live reports whose content cannot be opened and counts the rest', async ({ dir }) => {
  const log = await openFileLog({ dir, logger: memoryLogger().logger });
  try {
    // Keys minted and never put: events of another producer, whose keys this store never had.
    const events = Array.from(
      { length: 103 },
      (_, i) => sealedCreate(created(String(i), `r${i}`), log.keyStore()).event,
    );
    await log.append(events.map((event) => ({ key: event.subject, value: encodeEvent(event) })));
    // A tool reads the last batch once its keys are there (the server writes them beside it): a
    // batch after it shows it is no write in progress.
    await log.append([{ key: '103', value: encodeEvent(created('103', 'in the clear')) }]);
  } finally {
    await log.close();
  }
  const { code, stderr, findings } = await run({ REPORTS_DATA_DIR: dir });
  assert.is(code, 1);
  const printed = lines(stderr);
  assert.is(printed.length, 101);
  assert.is(printed.at(-1), '… and 3 more live reports whose sealed content fails its check');
  assert.equal([findings.problems, findings.unopenedReports], [103, 103]);
});

verify.run();

withKafka('reports verify, sealed', (brokers) => {
  const kafka = suite('reports verify: sealed content on Kafka');

  kafka(
    'every live report opens with its key from the key topic; one whose key is not there exits 1 naming it',
    async () => {
      const topic = uniqueTopic('cli-verify-keys');
      try {
        const sealed = await appendSealedToTopic(
          brokers,
          topic,
          [created('1', 'kept'), created('2', 'gone'), deleted('2'), created('3', 'lost')],
          (keys, [, gone, lost]) => keys.destroy([gone, lost].map((key) => key?.id ?? Buffer.alloc(0))),
        );
        const { code, stderr, findings } = await run(kafkaEnv(brokers, topic));
        assert.is(code, 1);
        assert.equal(lines(stderr), [
          `live report 3: its content key ${keyIdText(sealed[2]?.id ?? Buffer.alloc(0))} is not in the key store, so its name and tag cannot be read (a lost key, or another producer's event)`,
        ]);
        assert.equal([findings.sealedReports, findings.unopenedReports], [2, 1]);
      } finally {
        await withAdmin(brokers, (admin) => admin.deleteTopics({ topics: [topic, `${topic}.keys`] }));
      }
    },
  );

  kafka.run();
});
