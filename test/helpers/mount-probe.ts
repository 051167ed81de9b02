// What the suites that mount file systems of their own share: a try of the mount, once, on a
// throw-away directory, and registering the suites only where it worked. Where it did not they are
// left out with a loud message; in CI that is a failure, never a pass.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether `attempt` (given a fresh temporary directory, removed afterwards) runs without throwing. */
export function triedOnce(prefix: string, attempt: (dir: string) => void): boolean {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    attempt(dir);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Calls `register` (which defines and runs uvu suites) when `able`; otherwise says so, and throws in CI. */
export function registerWhere(
  able: boolean,
  { what, cannot, need }: { readonly what: string; readonly cannot: string; readonly need: string },
  register: () => void,
): void {
  if (able) return register();
  if (process.env['CI'] === 'true') throw new Error(`${cannot} in CI: the ${what} suites are mandatory; ${need}`);
  process.stderr.write(`\n!!! ${cannot}: the ${what} suites are NOT RUN. !!!\n\n`);
}
