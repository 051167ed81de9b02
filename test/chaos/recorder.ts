// Sends the workload's requests and records each with its answer. Every request carries a
// traceparent of its own; the service copies it into the event it writes, so the checker maps
// every event in the topic back to exactly one request.
import { randomBytes } from 'node:crypto';
import { TEST_TOKEN } from '../helpers/token.js';
import type { Purpose, ReadinessPoll, RequestRecord, WriteOp } from './history.js';

/** Where an instance answers now (it moves when the instance restarts); undefined while it is down. */
export type Locate = (instance: string) => string | undefined;

export interface WriteRequest {
  readonly op: WriteOp;
  readonly id: string;
  readonly name?: string;
  readonly instance: string;
  readonly purpose: Purpose;
}

/** Longer than any answer the service gives (REPORTS_WRITE_TIMEOUT_MS and then some): a hang shows as status 0. */
const CLIENT_TIMEOUT_MS = 20_000;

function errorMessage(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body;
  }
}

export class Recorder {
  readonly requests: RequestRecord[] = [];
  readonly polls: ReadinessPoll[] = [];
  private seq = 0;

  constructor(private readonly locate: Locate) {}

  async send(request: WriteRequest): Promise<RequestRecord> {
    const traceId = randomBytes(16).toString('hex');
    const seq = this.seq++;
    const sentMs = Date.now();
    const url = this.locate(request.instance);
    let status = 0;
    let message: string | undefined;
    if (url === undefined) {
      message = 'instance down';
    } else {
      try {
        const response = await fetch(this.target(url, request), this.init(request, traceId));
        status = response.status;
        const text = await response.text();
        if (status >= 400) message = errorMessage(text);
      } catch (error) {
        status = 0;
        message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      }
    }
    const record: RequestRecord = {
      ...request,
      seq,
      traceId,
      sentMs,
      answeredMs: Date.now(),
      status,
      ...(message === undefined ? {} : { message }),
    };
    this.requests.push(record);
    return record;
  }

  async poll(instance: string): Promise<void> {
    const sentMs = Date.now();
    const url = this.locate(instance);
    let status = 0;
    let reason: string | undefined;
    if (url !== undefined) {
      status = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
        async (response) => {
          const text = await response.text();
          if (response.status !== 200) reason = messageOf(text);
          return response.status;
        },
        () => 0,
      );
    }
    this.polls.push({ instance, sentMs, status, ...(reason === undefined ? {} : { reason }) });
  }

  private target(url: string, { op, id }: WriteRequest): string {
    return op === 'create' ? `${url}/reports` : `${url}/reports/${id}`;
  }

  private init({ op, id, name }: WriteRequest, traceId: string): RequestInit {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${TEST_TOKEN}`,
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
    };
    const signal = AbortSignal.timeout(CLIENT_TIMEOUT_MS);
    if (op === 'delete') return { method: 'DELETE', headers, signal };
    return {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: `{"id": ${id}, "name": ${JSON.stringify(name ?? '')}}`,
      signal,
    };
  }
}

function messageOf(body: string): string {
  try {
    const { message } = JSON.parse(body) as { message?: unknown };
    return typeof message === 'string' ? message : body;
  } catch {
    return body;
  }
}
