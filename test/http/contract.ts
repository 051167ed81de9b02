// The HTTP interface (README, "Using it"; docs/design.md, "Decisions") as one suite per route,
// parametrised by the event log, so the same rows run against the embedded file log and against
// Kafka. Tests never share ids, and fixed ids (int64 bounds, 1) are freed first, so a log that other
// runs wrote to does not disturb them.
import { authContract } from './contract/auth.js';
import { concurrencyContract } from './contract/concurrency.js';
import { conditionalWritesContract } from './contract/conditional-writes.js';
import { deleteReportContract } from './contract/delete-report.js';
import { getReportContract } from './contract/get-report.js';
import { idempotencyContract } from './contract/idempotency.js';
import { operationsContract } from './contract/operations.js';
import { postReportsContract } from './contract/post-reports.js';
import { traceContextContract } from './contract/trace-context.js';
import { idSource, type StartServer } from './requests.js';

export type { StartServer } from './requests.js';

export function httpContract(logName: string, start: StartServer): void {
  const nextId = idSource();
  postReportsContract(logName, start, nextId);
  deleteReportContract(logName, start, nextId);
  getReportContract(logName, start, nextId);
  conditionalWritesContract(logName, start, nextId);
  authContract(logName, start, nextId);
  operationsContract(logName, start, nextId);
  concurrencyContract(logName, start, nextId);
  idempotencyContract(logName, start, nextId);
  traceContextContract(logName, start, nextId);
}
