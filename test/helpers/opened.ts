// A report as a client would read it back: its content opened with its key when it is sealed.
import { isSealedReport, type ReportsView, type StoredReport } from '../../projections/reports.js';
import { openContent } from '../../projections/sealing.js';
import { parseKeyId, type KeyStore } from '../../src/keys/key-store.js';

/** The content of report `id` in the clear; undefined when absent or its key cannot open it. */
export async function openedReport(
  reports: ReportsView,
  keys: KeyStore,
  id: string,
): Promise<StoredReport | undefined> {
  const report = reports.get(id);
  if (report === undefined || !isSealedReport(report)) return report;
  const key = await keys.get(parseKeyId(report.sealed.key));
  return key === undefined
    ? undefined
    : openContent(report.sealed, key.secret, {
        id,
        ...(report.expectedversion === undefined ? {} : { expectedversion: report.expectedversion }),
      });
}
