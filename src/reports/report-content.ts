// Opens what the read model holds of a report: content in the clear as it is, sealed content with
// its key from the key store (projections/sealing.ts). Decisions that compare content come here (a
// create of an id that exists, a keyed retry), and so does a read (GET).
import type { Logger } from 'pino';
import { isSealedReport, type ReportContent, type ReportsView, type StoredReport } from '../../projections/reports.js';
import { openContent } from '../../projections/sealing.js';
import { parseKeyId, type KeyStore } from '../keys/key-store.js';
import { UnavailableError } from '../errors.js';
import { LogUnavailableError } from '../log/event-log.js';
import type { ReportView } from './decide.js';

export interface ContentOpener {
  /** The report `id` as a decision reads it, its content opened when live (a missing key is counted). */
  view(state: ReportsView, id: string): Promise<ReportView>;
  /**
   * The content of live report `id`, as the read model held it when called; undefined when its key
   * is missing, which is not counted here: a key destroyed by a delete the read model has not
   * folded yet is no missing key (the caller finds out, and counts with `missing`).
   */
  open(id: string, report: ReportContent): Promise<StoredReport | undefined>;
  /** Counts (and logs, by id and key id only) a live report whose content could not be opened. */
  missing(id: string, report: ReportContent): void;
  /** Live reports whose content could not be opened (a missing key), since start. */
  unopened(): number;
}

/**
 * A key store that cannot answer now (its topic unreachable, its leader in doubt) is a 503 like the
 * event log's, never a 500; its message (broker addresses) is logged, not sent.
 */
function keyStoreFailure(error: unknown, id: string, logger: Logger): unknown {
  if (!(error instanceof LogUnavailableError)) return error;
  logger.warn({ err: error, subject: id }, 'the key store is unavailable');
  return new UnavailableError('the key store is unavailable; retrying the same request is safe');
}

export function createContentOpener(keys: KeyStore, logger: Logger): ContentOpener {
  let unopened = 0;
  const open = async (id: string, report: ReportContent): Promise<StoredReport | undefined> => {
    if (!isSealedReport(report)) return report;
    const key = await keys.get(parseKeyId(report.sealed.key)).catch((error: unknown) => {
      throw keyStoreFailure(error, id, logger);
    });
    return key === undefined
      ? undefined
      : openContent(report.sealed, key.secret, {
          id,
          ...(report.expectedversion === undefined ? {} : { expectedversion: report.expectedversion }),
        });
  };
  const missing = (id: string, report: ReportContent): void => {
    unopened += 1;
    // The id only: never what the report holds.
    logger.warn(
      { id, key: isSealedReport(report) ? report.sealed.key : undefined },
      'the content of a live report cannot be opened: its key is missing from the key store',
    );
  };
  return {
    async view(state, id) {
      const version = state.version(id);
      const report = state.get(id);
      if (report === undefined) return { version, live: false };
      const content = await open(id, report);
      if (content === undefined) missing(id, report);
      return content === undefined ? { version, live: true } : { version, live: true, content };
    },
    open,
    missing,
    unopened: () => unopened,
  };
}
