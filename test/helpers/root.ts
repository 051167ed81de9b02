// Tests of what happens when the service and its tools run as different users need root, to make
// files another user's and to run a process as another user. As for the pid-1 signal test of
// start-settings.test.ts: in CI they are mandatory (run the tests as root); elsewhere a loud banner
// says they did not run.

/** The user tests run a process as, and give files to: nobody. */
export const OTHER_USER = { uid: 65534, gid: 65534 } as const;

/** Whether the tests of `what` can run here (as root); throws in CI when they cannot. */
export function asRoot(what: string): boolean {
  if (process.geteuid?.() === 0) return true;
  if (process.env['CI'] === 'true')
    throw new Error(`${what}: these tests need root and are mandatory in CI; run the tests as root`);
  process.stderr.write(`\n!!! not root: the tests of ${what} are NOT RUN. !!!\n\n`);
  return false;
}
