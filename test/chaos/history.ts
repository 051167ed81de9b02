// What a fault run records, and what the checker reads: every request with its answer and times,
// every /readyz poll, the fault windows, each instance's state at its clean stop, and the topic.
// Times are wall-clock milliseconds (Date.now()), comparable with the brokers' LogAppendTime.

export type WriteOp = 'create' | 'delete';

/** Why the workload sent a request; racing ids are never deleted, so their 200s must agree. */
export type Purpose = 'unique' | 'race' | 'cycle' | 'hop' | 'script';

export interface RequestRecord {
  readonly seq: number;
  /** The trace-id of the request's traceparent: the event it writes carries it. */
  readonly traceId: string;
  readonly op: WriteOp;
  readonly id: string;
  /** The name sent with a create. */
  readonly name?: string;
  readonly instance: string;
  readonly purpose: Purpose;
  readonly sentMs: number;
  readonly answeredMs: number;
  /** HTTP status, or 0 when no answer came (connection refused or lost, client time-out). */
  readonly status: number;
  /** The error body's message, or the client's error. */
  readonly message?: string;
}

export interface ReadinessPoll {
  readonly instance: string;
  readonly sentMs: number;
  /** 0 when the instance did not answer. */
  readonly status: number;
  /** A 503's message: which check said "not ready". */
  readonly reason?: string;
}

/** One fault, from its injection to its repair, and which partitions it left without a leader that answers. */
export interface FaultWindow {
  readonly fault: string;
  /** The nodes (or instances) the fault hit. */
  readonly targets: readonly string[];
  readonly startMs: number;
  /** When the fault was repaired (resumed, restarted). */
  readonly endMs: number;
  /** Partitions whose leader the fault hit at its start. */
  readonly stuckPartitions: readonly number[];
}

export interface TopicRecord {
  readonly partition: number;
  readonly offset: number;
  /** The leader's LogAppendTime: when the record landed. */
  readonly timestampMs: number;
  readonly value: Buffer;
}

/** What an instance logged at its clean stop. */
export interface InstanceStop {
  readonly instance: string;
  readonly position: string;
  readonly digest: string;
}

export interface RunHistory {
  readonly scenario: string;
  readonly partitions: number;
  readonly writeTimeoutMs: number;
  readonly requests: readonly RequestRecord[];
  readonly polls: readonly ReadinessPoll[];
  readonly faults: readonly FaultWindow[];
  readonly topic: readonly TopicRecord[];
  /** The topic's end offsets, `P:O,...`, as `reports replay` prints positions. */
  readonly topicEnd: string;
  readonly stops: readonly InstanceStop[];
  /** The digest `reports replay` printed for the final topic. */
  readonly replayDigest: string;
  /**
   * The creates (`P:O`) that `reports events` printed without their content (erased or unopenable):
   * their key is not in the key topic. A live report's create among them is why a digest disagrees.
   */
  readonly unopened?: readonly string[];
  readonly endMs: number;
}

/** Answers that acknowledge a write: the client may rely on it. */
export function acknowledged(request: RequestRecord): boolean {
  return (request.op === 'create' && request.status === 200) || (request.op === 'delete' && request.status === 204);
}

/** Answers that settle a request either way (the store decided); anything else leaves it unknown. */
export function settled(request: RequestRecord): boolean {
  return acknowledged(request) || request.status === 404 || request.status === 409;
}

/** No answer, or one that says the write may or may not happen (503, time-outs, lost connections). */
export function unknownOutcome(request: RequestRecord): boolean {
  return !settled(request);
}
