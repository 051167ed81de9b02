// `BENCH_BASELINE=<commit>`: the service as it was at another commit, built beside this checkout
// (.cache/bench-baseline/<sha>: `git archive` of the commit's sources, this checkout's
// node_modules, its own `tsc -p src/tsconfig.json`), so that one run of a bench (`make bench`,
// `make bench-start`) measures both and a
// change's cost is a ratio taken on one machine at one time. Built once per commit.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

export interface BaselineBuild {
  /** The commit, abbreviated, as the bench names its targets. */
  readonly name: string;
  /** The baseline's dist/src/main.js. */
  readonly mainScript: string;
  /** The baseline's dist/src/cli/main.js (the `reports` CLI). */
  readonly cliScript: string;
}

/** Builds (once) the service at `revision` and returns where its entry points are. */
export function buildBaseline(revision: string, progress: (line: string) => void): BaselineBuild {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  const sha = git('rev-parse', '--verify', `${revision}^{commit}`);
  const dir = join(ROOT, '.cache', 'bench-baseline', sha);
  const mainScript = join(dir, 'dist', 'src', 'main.js');
  if (!existsSync(mainScript)) {
    progress(`building the baseline ${sha.slice(0, 10)} (${revision}) in ${dir}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} package.json tsconfig.json src projections | tar -x -C "${dir}"`], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(dir, 'src', 'tsconfig.json')], {
      cwd: dir,
      stdio: 'inherit',
    });
  }
  return { name: sha.slice(0, 10), mainScript, cliScript: join(dir, 'dist', 'src', 'cli', 'main.js') };
}
