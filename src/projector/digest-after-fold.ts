// The state digest of a fold, with the key table read while the fold runs (`reports replay`): the
// table (72 MB of keys.db at a million reports, each slot checked) is read on the main thread,
// which otherwise waits for the fold's threads, instead of after them. A table read before the fold
// ended may lack the key of an event the fold reached later (it folds up to the log's head as of
// its own start, and on the file log a batch and its keys are written side by side): where any live
// sealed report's key is missing from it, or it could not be read (a key topic slow to catch up
// while the fold ran), the digest is taken with a table read after the fold, as it always was. So
// a table read early never changes a digest that names a missing key. It can name present a key
// destroyed while the fold ran (its report deleted after the fold's end): the digest of the state
// at the fold's end, where the report is live.
import type { LiveReports } from '../../projections/canonical.js';
import type { KeyLookup } from '../keys/key-store.js';
import type { ReportTable } from '../read-model/report-table.js';
import { keyDigestOf, stateDigest } from './fold-log.js';

/** Where the key table comes from: read again on every call. */
export interface KeyTableSource {
  lookup(): Promise<KeyLookup>;
}

/**
 * Runs `fold`, reading `keys`' table meanwhile, and returns the digest of `reports` once folded.
 * `early: false` reads it after the fold only: a fold that stops at a past position (`--to`) holds
 * reports deleted since, whose keys are gone, and an early table would always be read twice.
 */
export async function digestAfterFold(
  keys: KeyTableSource,
  fold: () => Promise<void>,
  reports: ReportTable | LiveReports,
  { early: readEarly = true } = {},
): Promise<string> {
  // A failure of the early read is not the replay's: the table is read again after the fold.
  const early = readEarly ? keys.lookup().catch(() => undefined) : undefined;
  await fold();
  const table = await early;
  if (table !== undefined) {
    const missing = { any: false };
    const digest = stateDigest(reports, noticingMisses(table, missing));
    if (!missing.any) return digest;
  }
  return stateDigest(reports, await keys.lookup());
}

/** `keys`, noting in `missing` whether any key asked of it was not there. */
function noticingMisses(keys: KeyLookup, missing: { any: boolean }): KeyLookup {
  const digestOf = keyDigestOf(keys);
  return {
    get: (id) => {
      const found = keys.get(id);
      if (found === undefined) missing.any = true;
      return found;
    },
    copyContentDigest: (keyId, start, end, into) => {
      const found = digestOf(keyId, start, end, into);
      if (!found) missing.any = true;
      return found;
    },
  };
}
