// Which failed head reads `PartitionHeads` asks again at once, of the leader its refreshed view
// names (`allHeads`: the log's head, which a tool reads once at its start; `head`: one partition's,
// as the key follower's catch-up and a write's catch-up read it): a broker's answer that it no
// longer leads the partition, as kafkajs makes it from the protocol's error code. The chaos suite's `reports events`, run just after a
// broker came back, failed on "This server is not the leader for that topic-partition". An
// outage's error is not asked again: its timeout would be waited once more for nothing.
import { createRequire } from 'node:module';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { movedLeadership } from '../../../src/log/kafka/partition-heads.js';

/** kafkajs' own error factory: the error a broker's answer with this protocol error code becomes. */
const { createErrorFromCode } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as {
  createErrorFromCode: (code: number) => Error;
};
/** Kafka protocol error codes. */
const NOT_LEADER_OR_FOLLOWER = 6;
const LEADER_NOT_AVAILABLE = 5;
const REQUEST_TIMED_OUT = 7;
const UNKNOWN_TOPIC_OR_PARTITION = 3;

const moved = suite('kafka: a head read asked of a broker that no longer leads');

moved('takes "not the leader" and "leader not available" for a moved leadership', () => {
  const notLeader = createErrorFromCode(NOT_LEADER_OR_FOLLOWER);
  assert.is(notLeader.message, 'This server is not the leader for that topic-partition');
  assert.ok(movedLeadership(notLeader));
  assert.ok(movedLeadership(createErrorFromCode(LEADER_NOT_AVAILABLE)));
});

moved('does not take an outage, a missing topic or another error for one', () => {
  assert.not.ok(movedLeadership(createErrorFromCode(REQUEST_TIMED_OUT)));
  assert.not.ok(movedLeadership(createErrorFromCode(UNKNOWN_TOPIC_OR_PARTITION)));
  assert.not.ok(movedLeadership(new Error('connect ECONNREFUSED 127.0.0.1:28101')));
  assert.not.ok(movedLeadership(undefined));
  assert.not.ok(movedLeadership('NOT_LEADER_FOR_PARTITION'));
});

moved.run();
