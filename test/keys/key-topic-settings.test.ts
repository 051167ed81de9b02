// The key topic's settings: derived from the erasure bound when the service creates the topic, and
// checked against it when it exists; a topic that would keep a destroyed key, lose a live one, or
// keep one longer than the bound is refused with one line naming the topic and the setting.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  checkKeyTopicConfig,
  erasureWithinMs,
  KAFKA_CLEANER_DEFAULTS,
  keyTopicCreationConfig,
  ROLL_MARGIN_MS,
  ROLL_SPREAD_MS,
} from '../../src/log/kafka/key-topic-settings.js';

const DAY = 86_400_000;
const CLEANER = { enabled: true, backoffMs: 1000 };
const created = (boundMs = DAY, replicationFactor = 1) =>
  new Map(Object.entries(keyTopicCreationConfig(boundMs, replicationFactor)));

function refusal(
  settings: ReadonlyMap<string, string>,
  boundMs = DAY,
  cleaner = CLEANER,
  replicationFactor = 1,
): string {
  try {
    checkKeyTopicConfig('keys.t', settings, replicationFactor, boundMs, cleaner);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    assert.not.match(message, /\n/, 'one line');
    assert.match(message, /keys\.t/);
    return message;
  }
  throw new Error('the settings were accepted');
}

const settings = suite('key topic settings');

settings('a created topic compacts, never expires a key, and takes half the bound', () => {
  assert.equal(keyTopicCreationConfig(DAY, 1), {
    'cleanup.policy': 'compact',
    'retention.ms': '-1',
    'retention.bytes': '-1',
    'max.compaction.lag.ms': '43200000',
    'segment.ms': '21600000',
    'min.compaction.lag.ms': '0',
    'min.cleanable.dirty.ratio': '0.01',
    'delete.retention.ms': '3600000',
    'file.delete.delay.ms': '60000',
    'unclean.leader.election.enable': 'false',
  });
  assert.is(keyTopicCreationConfig(DAY, 3)['min.insync.replicas'], '2');
  const check = checkKeyTopicConfig('keys.t', created(), 1, DAY, KAFKA_CLEANER_DEFAULTS);
  assert.is(check.erasureWithinMs, 43_200_000 + 15_000 + 60_000);
  assert.ok(check.erasureWithinMs <= DAY / 2 + 75_000);
});

settings(
  'the erasure bound: the later of the roll (plus its margin) and the compaction lag, then the cleaner back-off and the file deletion delay',
  () => {
    const timing = { segmentMs: 3000, maxCompactionLagMs: 6000, minCompactionLagMs: 0, fileDeleteDelayMs: 600 };
    assert.is(erasureWithinMs(timing, CLEANER), 6000 + 1000 + 600);
    assert.is(
      erasureWithinMs({ ...timing, segmentMs: 5900 }, CLEANER),
      5900 + ROLL_MARGIN_MS + ROLL_SPREAD_MS + 1000 + 600,
    );
    assert.is(erasureWithinMs({ ...timing, minCompactionLagMs: 9000 }, CLEANER), 9000 + 1000 + 600);
  },
);

settings('a topic that is not compacted is refused, naming cleanup.policy', () => {
  assert.match(refusal(new Map([...created(), ['cleanup.policy', 'delete']])), /cleanup\.policy=delete/);
  assert.match(refusal(new Map([...created()].filter(([name]) => name !== 'cleanup.policy'))), /cleanup\.policy=unset/);
});

settings('with the delete policy too, finite retention is refused; infinite retention is accepted', () => {
  const both = new Map([...created(), ['cleanup.policy', 'compact,delete']]);
  assert.match(refusal(new Map([...both, ['retention.ms', '604800000']])), /retention\.ms=604800000.*never expire/);
  assert.match(refusal(new Map([...both, ['retention.bytes', '1073741824']])), /retention\.bytes=1073741824/);
  checkKeyTopicConfig('keys.t', both, 1, DAY, CLEANER);
  checkKeyTopicConfig('keys.t', new Map([...created(), ['retention.ms', '604800000']]), 1, DAY, CLEANER);
});

settings(
  'a max.compaction.lag.ms that would keep a destroyed key past the bound is refused, naming it and the value to set',
  () => {
    const message = refusal(new Map([...created(12_000), ['max.compaction.lag.ms', '86400000']]), 12_000);
    assert.match(message, /max\.compaction\.lag\.ms=86400000/);
    assert.match(message, /REPORTS_KEY_ERASURE_BOUND_MS=12000/);
    assert.match(message, /--add-config max\.compaction\.lag\.ms=6000/);
    // Kafka's default, Long.MAX_VALUE: never forced.
    assert.match(
      refusal(new Map([...created()].filter(([name]) => name !== 'max.compaction.lag.ms'))),
      /max\.compaction\.lag\.ms=9223372036854775807/,
    );
  },
);

settings(
  "so are a long min.compaction.lag.ms and file.delete.delay.ms, and a slow cleaner names the brokers' back-off",
  () => {
    assert.match(
      refusal(new Map([...created(12_000), ['min.compaction.lag.ms', '60000']]), 12_000),
      /min\.compaction\.lag\.ms=60000/,
    );
    assert.match(
      refusal(new Map([...created(12_000), ['file.delete.delay.ms', '60000']]), 12_000),
      /file\.delete\.delay\.ms=60000/,
    );
    assert.match(refusal(created(12_000), 12_000, KAFKA_CLEANER_DEFAULTS), /log\.cleaner\.backoff\.ms=15000/);
  },
);

settings('a long segment.ms alone is no refusal: the compaction lag rolls the segment', () => {
  checkKeyTopicConfig('keys.t', new Map([...created(12_000), ['segment.ms', '604800000']]), 1, 12_000, CLEANER);
});

settings('a broker without a log cleaner and unclean leader election are refused', () => {
  assert.match(refusal(created(), DAY, { enabled: false, backoffMs: 1000 }), /log\.cleaner\.enable=false/);
  assert.match(
    refusal(new Map([...created(), ['unclean.leader.election.enable', 'true']])),
    /unclean\.leader\.election\.enable=true/,
  );
});

settings('a replicated topic with min.insync.replicas=1 starts with a warning naming the fix', () => {
  const { warnings, minInsyncReplicas, maxMessageBytes } = checkKeyTopicConfig(
    'keys.t',
    new Map([...created(DAY, 3), ['min.insync.replicas', '1'], ['max.message.bytes', '2000000']]),
    3,
    DAY,
    CLEANER,
  );
  assert.is(minInsyncReplicas, 1);
  assert.is(maxMessageBytes, 2_000_000);
  assert.is(warnings.length, 1);
  assert.match(warnings[0] ?? '', /min\.insync\.replicas=2/);
  assert.equal(checkKeyTopicConfig('keys.t', created(DAY, 3), 3, DAY, CLEANER).warnings, []);
});

settings('a min.insync.replicas above the replicas refuses a key writer and warns a reader', () => {
  assert.throws(
    () => checkKeyTopicConfig('keys.t', new Map([...created(DAY, 1), ['min.insync.replicas', '2']]), 1, DAY, CLEANER),
    /key topic keys\.t has 1 replica but min\.insync\.replicas=2: Kafka would refuse every write/,
  );
  const read = checkKeyTopicConfig(
    'keys.t',
    new Map([...created(DAY, 1), ['min.insync.replicas', '2']]),
    1,
    DAY,
    CLEANER,
    false,
  );
  assert.match(read.warnings.join('\n'), /Kafka would refuse every write/);
});

settings.run();
