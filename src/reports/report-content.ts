// Opens what the read model holds of a report for a decision: content in the clear as it is, sealed
// content with its key from the key store (projections/sealing.ts). Only decisions that compare
// content come here (a create of an id that exists, a keyed retry), never the common path.
import type { Logger } from 'pino';
import { isSealedReport, type ReportContent, type ReportsView, type StoredReport } from '../../projections/reports.js';
import { openContent } from '../../projections/sealing.js';
import { parseKeyId, type KeyStore } from '../keys/key-store.js';
import type { ReportView } from './decide.js';

export interface ContentOpener {
  /** The report `id` as a decision reads it, its content opened when live. */
  view(state: ReportsView, id: string): Promise<ReportView>;
  /** Live reports whose content could not be opened (a missing key), since start. */
  unopened(): number;
}

export function createContentOpener(keys: KeyStore, logger: Logger): ContentOpener {
  let unopened = 0;
  const open = async (id: string, report: ReportContent): Promise<StoredReport | undefined> => {
    if (!isSealedReport(report)) return report;
    const key = await keys.get(parseKeyId(report.sealed.key));
    const content = key === undefined ? undefined : openContent(report.sealed, key.secret, { id, ...(report.expectedversion === undefined ? {} : { expectedversion: report.expectedversion }) });
    if (content === undefined) {
      unopened += 1;
      // The id only: never what the report holds.
      logger.warn({ id, key: report.sealed.key }, 'the content of a live report cannot be opened: its key is missing from the key store');
    }
    return content;
  };
  return {
    async view(state, id) {
      const version = state.version(id);
      const report = state.get(id);
      if (report === undefined) return { version, live: false };
      const content = await open(id, report);
      return content === undefined ? { version, live: true } : { version, live: true, content };
    },
    unopened: () => unopened,
  };
}
