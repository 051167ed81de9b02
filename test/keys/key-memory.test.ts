// Memory from two sources: what the follower reads, in order, and this instance's acknowledged
// writes, applied at once. A destroy acknowledged ahead of the follower leaves a fence, so the
// key's earlier record, read after it, does not bring the key back.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KeyMemory } from '../../src/keys/key-memory.js';
import { encodeKeyValue, ROLL_KEY } from '../../src/keys/key-record.js';
import { keyIdText, type ContentKey } from '../../src/keys/key-store.js';
import { putWrite } from '../../src/keys/key-writes.js';
import type { LogRecord } from '../../src/log/event-log.js';
import { TopicSettingsError } from '../../src/log/kafka/topic.js';

const newKey = (): ContentKey => ({ id: randomBytes(16), secret: randomBytes(32), contentDigest: randomBytes(32) });
const record = (key: string, value: Buffer, offset: number, partition = 0): LogRecord => ({
  key,
  value,
  timestampMs: 1,
  position: { partition, offset },
});
const keyRecord = (key: ContentKey, offset: number) => record(keyIdText(key.id), encodeKeyValue(key), offset);
const tombstone = (key: ContentKey, offset: number) => record(keyIdText(key.id), Buffer.alloc(0), offset);
const memoryOf = () => new KeyMemory('keys.t', () => 0);

const memory = suite('KeyMemory');

memory('what the follower reads: a key record holds the key, its tombstone forgets it', () => {
  const keys = memoryOf();
  const key = newKey();
  assert.is(keys.apply(keyRecord(key, 0)), 'key');
  assert.equal(keys.get(keyIdText(key.id)), key);
  assert.is(keys.apply(tombstone(key, 1)), 'destroyed');
  assert.is(keys.get(keyIdText(key.id)), undefined);
  assert.is(keys.size, 0);
});

memory('roll records and records of another format change nothing', () => {
  const keys = memoryOf();
  assert.is(keys.apply(record(ROLL_KEY, Buffer.alloc(0), 0)), 'roll');
  assert.is(keys.apply(record(keyIdText(randomBytes(16)), Buffer.from('garbage'), 1)), 'unreadable');
  assert.is(keys.size, 0);
});

memory('a put is held as soon as it is acknowledged', () => {
  const keys = memoryOf();
  const key = newKey();
  keys.written([putWrite([key], (k) => keyIdText(k.id))], [0], new Map());
  assert.equal(keys.get(keyIdText(key.id)), key);
});

memory('a destroy acknowledged ahead of the follower is not undone by the key record it reads after', () => {
  const keys = memoryOf();
  const key = newKey();
  const id = keyIdText(key.id);
  keys.written(
    [putWrite([key], (k) => keyIdText(k.id)), { kind: 'destroy', idTexts: [id] }, { kind: 'roll', partitions: [0] }],
    [5, 6, 7],
    new Map([[0, 5]]),
  );
  assert.is(keys.get(id), undefined);
  keys.apply(keyRecord(key, 5));
  assert.is(keys.get(id), undefined, 'the fence holds');
  keys.apply(tombstone(key, 6));
  keys.apply(keyRecord(key, 8));
  assert.equal(keys.get(id), key, 'the fence went with its tombstone: a later record of the id applies');
});

memory(
  'a fence the follower has passed goes, and one with an unknown offset goes with the first tombstone read',
  () => {
    const keys = memoryOf();
    const passed = newKey();
    const unknown = newKey();
    keys.written(
      [{ kind: 'destroy', idTexts: [keyIdText(passed.id), keyIdText(unknown.id)] }],
      [3, Infinity],
      new Map(),
    );
    keys.passed(new Map([[0, 4]]));
    keys.apply(keyRecord(passed, 9));
    assert.equal(keys.get(keyIdText(passed.id)), passed, 'no fence left for it');
    keys.apply(keyRecord(unknown, 10));
    assert.is(keys.get(keyIdText(unknown.id)), undefined);
    keys.apply(tombstone(unknown, 11));
    keys.apply(keyRecord(unknown, 12));
    assert.equal(keys.get(keyIdText(unknown.id)), unknown);
  },
);

memory('a destroy the follower has already passed leaves no fence', () => {
  const keys = memoryOf();
  const key = newKey();
  keys.written([{ kind: 'destroy', idTexts: [keyIdText(key.id)] }], [3], new Map([[0, 4]]));
  keys.apply(keyRecord(key, 9));
  assert.equal(keys.get(keyIdText(key.id)), key);
});

memory('a key record outside its partition is refused (the partition count changed)', () => {
  const keys = new KeyMemory('keys.t', () => 1);
  assert.throws(
    () => keys.apply(keyRecord(newKey(), 7)),
    /key topic keys\.t has a key at partition 0 offset 7 that belongs in partition 1/,
  );
  assert.throws(
    () => keys.apply(tombstone(newKey(), 8)),
    (error: unknown) => error instanceof TopicSettingsError,
  );
});

memory('clear forgets every key', () => {
  const keys = memoryOf();
  keys.apply(keyRecord(newKey(), 0));
  keys.clear();
  assert.is(keys.size, 0);
});

memory.run();
