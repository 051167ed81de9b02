// A module resolve hook for run-tests' workers (test-worker.ts registers it): a test's `import 'uvu'`
// gets uvu-guarded.ts, which records what uvu's hooks throw; uvu-guarded.ts itself gets uvu.
import type { ResolveHook } from 'node:module';

/**
 * Where uvu-guarded.ts leaves the hooks' errors for the worker, in the order they were thrown. Here,
 * as the worker must not import uvu-guarded.ts (and so uvu) before it has set UVU_DEFER.
 */
export const HOOK_ERRORS = Symbol.for('run-tests:hook-errors');

const GUARDED = new URL('./uvu-guarded.js', import.meta.url).href;

export const resolve: ResolveHook = (specifier, context, next) =>
  specifier === 'uvu' && context.parentURL !== GUARDED
    ? { url: GUARDED, shortCircuit: true }
    : next(specifier, context);
