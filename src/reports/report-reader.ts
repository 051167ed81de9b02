// The read side of the service (GET): a report and its version from the projected state, caught up
// with everything written for its id before the request, on any instance, as every answer that
// writes nothing is. It decides nothing that is written, so it waits behind no write of the id.
import type { ReportsView, ReportContent, StoredReport } from '../../projections/reports.js';
import { UnavailableError } from '../errors.js';
import { contentUnopened, notFound, preconditionFailed } from './answers.js';
import { decideRead, NO_PRECONDITIONS, type Preconditions } from './decide.js';
import type { ContentOpener } from './report-content.js';

/** What a read answers: the report at its version (the ETag), or only the version when the client's copy is current (304). */
export type ReadAnswer =
  | { readonly kind: 'report'; readonly report: StoredReport; readonly version: number }
  | { readonly kind: 'not-modified'; readonly version: number };

export type ReadReport = (id: string, preconditions?: Preconditions) => Promise<ReadAnswer>;

/** Reads of a report that have found it changed this often in a row give up (503; retrying is safe). */
export const MAX_READS = 4;

export interface ReaderDeps {
  readonly opener: ContentOpener;
  readonly writeTimeoutMs: number;
  readonly clockMs: () => number;
  /** The projected state; 503 while it catches up with the log at start. */
  readonly readyState: (deadline: number) => ReportsView;
  /** Waits until the state holds everything written for `id` before now; false when the log has no other writer. */
  readonly caughtUpWith: (id: string, deadline: number) => Promise<boolean>;
  /** What a failure of the log or key store becomes for the client (503). */
  readonly answerTo: (error: unknown, id: string) => unknown;
}

export function createReportReader({
  opener,
  writeTimeoutMs,
  clockMs,
  readyState,
  caughtUpWith,
  answerTo,
}: ReaderDeps): ReadReport {
  /** Whether report `id` is no longer at `version`, in the state here or once caught up with its partition. */
  const movedOn = async (state: ReportsView, id: string, version: number, deadline: number): Promise<boolean> => {
    if (state.version(id) !== version) return true;
    return (await caughtUpWith(id, deadline)) && state.version(id) !== version;
  };
  const open = async (id: string, report: ReportContent): Promise<StoredReport | undefined> => {
    try {
      return await opener.open(id, report);
    } catch (error) {
      throw answerTo(error, id);
    }
  };

  return async (id, preconditions = NO_PRECONDITIONS) => {
    const deadline = clockMs() + writeTimeoutMs;
    const state = readyState(deadline);
    await caughtUpWith(id, deadline);
    for (let reads = 1; ; reads += 1) {
      const decision = decideRead({ version: state.version(id), live: state.has(id) }, preconditions);
      if (decision.kind === 'not-found') throw notFound(id);
      if (decision.kind === 'precondition-failed') throw preconditionFailed(id, decision.failed);
      // A true If-None-Match needs the version alone: the content is not opened.
      if (decision.kind === 'not-modified') return decision;
      const report = state.get(id);
      const content = report === undefined ? undefined : await open(id, report);
      if (content !== undefined) return { kind: 'report', report: content, version: decision.version };
      // No key: a delete destroys the key once its event is folded here or on another instance, so
      // a key gone while the report still looks live here may be a delete this state has not folded
      // yet. Read again once caught up with it; a report still live at this version lacks its key.
      if (!(await movedOn(state, id, decision.version, deadline))) {
        if (report !== undefined) opener.missing(id, report);
        throw contentUnopened(id);
      }
      if (reads >= MAX_READS)
        throw new UnavailableError(`report ${id} changed each of the ${MAX_READS} times it was read; retry`);
    }
  };
}
