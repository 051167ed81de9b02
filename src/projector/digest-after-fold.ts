// The state digest of a fold, with the key table read while the fold runs (`reports replay`): the
// table (72 MB of keys.db at a million reports, each slot checked) is read on the main thread,
// which otherwise waits for the fold's threads, instead of after them. A table read before the fold
// ended may lack the key of an event the fold reached later (it folds up to the log's head as of
// its own start, and on the file log a batch and its keys are written side by side): where any live
// sealed report's key is missing from it, the digest is taken again with a table read after the
// fold, as it always was, so a table read early never changes a digest that names a missing key.
import type { LiveReports } from '../../projections/canonical.js';
import type { KeyId, KeyLookup } from '../keys/key-store.js';
import type { ReportTable } from '../read-model/report-table.js';
import { stateDigest } from './fold-log.js';

/** Where the key table comes from: read again on every call. */
export interface KeyTableSource {
  lookup(): Promise<KeyLookup>;
}

/** Runs `fold`, reading `keys`' table meanwhile, and returns the digest of `reports` once folded. */
export async function digestAfterFold(
  keys: KeyTableSource,
  fold: () => Promise<void>,
  reports: ReportTable | LiveReports,
): Promise<string> {
  const early = keys.lookup();
  // Handled either way: a fold that fails leaves it unawaited, and its failure is the fold's to tell.
  early.catch(() => undefined);
  await fold();
  const missing = { any: false };
  const digest = stateDigest(reports, noticingMisses(await early, missing));
  return missing.any ? stateDigest(reports, await keys.lookup()) : digest;
}

/** `keys`, noting in `missing` whether any key asked of it was not there. */
function noticingMisses(keys: KeyLookup, missing: { any: boolean }): KeyLookup {
  const digestOf = keys.contentDigestOf?.bind(keys) ?? ((id: KeyId) => keys.get(id)?.contentDigest);
  const noted = <T>(found: T | undefined): T | undefined => {
    if (found === undefined) missing.any = true;
    return found;
  };
  return { get: (id) => noted(keys.get(id)), contentDigestOf: (id) => noted(digestOf(id)) };
}
