// Builds run histories by hand for the checker's own tests: requests with their answers, and the
// events they landed in the topic, in the order and at the times a test states.
import { randomBytes } from 'node:crypto';
import { encodeEvent } from '../../../projections/codec.js';
import type { ReportEvent } from '../../../projections/events.js';
import { basedOn, created, deleted } from '../../helpers/events.js';
import type {
  FaultWindow,
  Purpose,
  ReadinessPoll,
  RequestRecord,
  RunHistory,
  TopicRecord,
  WriteOp,
} from '../history.js';
import { foldTopic } from './fold-topic.js';

export interface StoryRequest {
  readonly op: WriteOp;
  readonly id: string;
  readonly name?: string;
  readonly instance?: string;
  readonly purpose?: Purpose;
  readonly sentMs: number;
  readonly answeredMs: number;
  readonly status: number;
}

export class Story {
  readonly requests: RequestRecord[] = [];
  readonly topic: TopicRecord[] = [];
  readonly polls: ReadinessPoll[] = [];
  readonly faults: FaultWindow[] = [];

  request({ instance = 'A', purpose = 'cycle', ...rest }: StoryRequest): RequestRecord {
    const record: RequestRecord = {
      ...rest,
      instance,
      purpose,
      seq: this.requests.length,
      traceId: randomBytes(16).toString('hex'),
    };
    this.requests.push(record);
    return record;
  }

  /** Appends the request's event to `partition` (next offset), landing at `atMs`, decided on `expectedVersion` when given. */
  land(request: RequestRecord, atMs: number, partition = 0, expectedVersion?: number): this {
    const plain: ReportEvent = request.op === 'create' ? created(request.id, request.name ?? '') : deleted(request.id);
    const base: ReportEvent = expectedVersion === undefined ? plain : basedOn(plain, expectedVersion);
    const event: ReportEvent = { ...base, traceparent: `00-${request.traceId}-${randomBytes(8).toString('hex')}-01` };
    const offset = this.topic.filter((record) => record.partition === partition).length;
    this.topic.push({ partition, offset, timestampMs: atMs, value: encodeEvent(event) });
    return this;
  }

  /** The record at `offset` of `partition` written again at `atMs` (a producer's retry: the same event, a new offset). */
  copy(offset: number, atMs: number, partition = 0): this {
    const records = this.topic.filter((record) => record.partition === partition);
    const original = records.find((record) => record.offset === offset);
    if (original === undefined) throw new Error(`partition ${partition} has no record at offset ${offset}`);
    this.topic.push({ ...original, offset: records.length, timestampMs: atMs });
    return this;
  }

  /** A request answered as given whose event landed at its answer (the common case). */
  write(request: StoryRequest, partition = 0): RequestRecord {
    const record = this.request(request);
    this.land(record, request.answeredMs, partition);
    return record;
  }

  poll(instance: string, sentMs: number, status: number): this {
    this.polls.push({ instance, sentMs, status });
    return this;
  }

  /** The history, with every digest agreeing with the fold unless `overrides` says otherwise. */
  history(overrides: Partial<RunHistory> = {}): RunHistory {
    const digest = foldTopic(this.topic, this.requests).digest;
    const end = [0, 1, 2]
      .map((partition) => `${partition}:${this.topic.filter((record) => record.partition === partition).length}`)
      .join(',');
    return {
      scenario: 'story',
      partitions: 3,
      writeTimeoutMs: 5000,
      requests: this.requests,
      polls: this.polls,
      faults: this.faults,
      topic: this.topic,
      topicEnd: end,
      stops: [{ instance: 'A', position: end, digest }],
      replayDigest: digest,
      endMs: Math.max(0, ...this.requests.map((request) => request.answeredMs)),
      ...overrides,
    };
  }
}
