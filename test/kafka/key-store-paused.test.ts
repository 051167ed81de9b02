// The key store on a broker that stops answering (SIGSTOP: connections open, nothing answers), a
// private one so the shared test broker is never paused: a write not acknowledged within its
// timeoutMs is rejected with AppendTimeoutError, one beyond its partition's cap at once with LogOverloadedError,
// a read that must catch up answers LogUnavailableError within the write timeout, and once the
// broker resumes, writes and reads succeed again and close leaves nothing behind.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ContentKey } from '../../src/keys/key-store.js';
import { AppendTimeoutError, LogOverloadedError, LogUnavailableError } from '../../src/log/event-log.js';
import { removeOwnBroker, startOwnBroker, type KafkaBroker } from '../helpers/kafka-broker.js';
import { digestOf, openTestKeyStore, type TestKeyStore } from '../helpers/kafka-keys.js';
import { uniqueTopic, withKafka } from '../helpers/kafka.js';

const WRITE_TIMEOUT_MS = 2000;
const TIMEOUT_MS = 500;

const failure = (work: Promise<unknown>) =>
  work.then(
    () => undefined,
    (error: unknown) => error,
  );
/** Keys of one report, so of one partition: the cap is per partition. */
const ONE_REPORT = { partitionKey: '1' };

withKafka('key store, paused broker', () => {
  const paused = suite<{ broker: KafkaBroker; keys: TestKeyStore }>(
    'kafka: the key store when the broker does not answer',
  );

  paused.before(async (context) => {
    context.broker = await startOwnBroker('keys-paused', { onExit: 'kill' });
    context.keys = await openTestKeyStore(
      context.broker.brokers,
      uniqueTopic('keys-paused'),
      {},
      { maxPendingWrites: 2, writeTimeoutMs: WRITE_TIMEOUT_MS },
    );
  });
  paused.after(async ({ broker, keys }) => {
    broker?.resume();
    await keys?.store.close();
    await removeOwnBroker(broker, 'kill');
  });

  paused(
    'writes time out and are refused beyond the cap, reads answer unavailable, and all succeed once the broker resumes',
    async ({ broker, keys: { store } }) => {
      const kept = store.mint(digestOf('kept'), ONE_REPORT);
      await store.put([kept]);
      broker.pause();
      try {
        const keys = Array.from({ length: 4 }, (_, i) => store.mint(digestOf(`stuck ${i}`), ONE_REPORT));
        const started = performance.now();
        const inFlight = failure(store.put([keys[0] as ContentKey], { timeoutMs: TIMEOUT_MS }));
        const waiting = [
          failure(store.put([keys[1] as ContentKey], { timeoutMs: TIMEOUT_MS })),
          failure(store.destroy([kept.id], { timeoutMs: TIMEOUT_MS })),
        ];
        assert.instance(await failure(store.put([keys[3] as ContentKey])), LogOverloadedError);
        assert.ok(performance.now() - started < 100, 'refused at once');
        for (const write of [inFlight, ...waiting]) {
          const error = await write;
          assert.instance(error, AppendTimeoutError, String(error));
        }
        const writesMs = performance.now() - started;
        assert.ok(
          writesMs >= TIMEOUT_MS - 50 && writesMs < TIMEOUT_MS + 1000,
          `writes answered after ${writesMs.toFixed(0)} ms`,
        );
        assert.equal(await store.get(kept.id), kept, 'a key in memory is answered without the broker');
        const readStarted = performance.now();
        assert.instance(await failure(store.get(Buffer.alloc(16, 3))), LogUnavailableError);
        const readMs = performance.now() - readStarted;
        assert.ok(
          readMs >= WRITE_TIMEOUT_MS - 50 && readMs < WRITE_TIMEOUT_MS + 1000,
          `a read that must catch up answered after ${readMs.toFixed(0)} ms`,
        );
      } finally {
        broker.resume();
      }
      const again = store.mint(digestOf('again'));
      await store.put([again], { timeoutMs: 20_000 });
      assert.equal(await store.get(again.id), again);
      assert.equal(
        (await store.lookup()).get(kept.id),
        kept,
        'the destroy that timed out was dropped before it was sent',
      );
    },
  );

  paused.run();
});
