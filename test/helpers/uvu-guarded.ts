// uvu as the tests import it inside run-tests (uvu-resolve.ts points `uvu` here), with one change:
// a hook that throws is recorded where the worker reads it. uvu itself loses such an error: its
// runner returns from a `finally`, so a `before` hook that throws ends the suite as "(0 / 1)" with
// no error at all, and an `after.each` that throws after a failed test replaces that test's error.
// A CI run once counted "1 failed" that way with no file or message to say which.
import * as uvu from 'uvu';
import { HOOK_ERRORS } from './uvu-resolve.js';

type Hook = (state: Record<string, unknown>) => unknown;
type Register = (hook: Hook) => void;
type Hooks = Register & { each: Register };

const recorded = ((globalThis as Record<symbol, unknown>)[HOOK_ERRORS] ??= []) as string[];

function guard(suiteName: string, kind: string, hook: Hook): Hook {
  return async (state) => {
    try {
      await hook(state);
    } catch (error) {
      const where = typeof state.__test__ === 'string' && state.__test__ ? ` (test "${state.__test__}")` : '';
      recorded.push(
        `suite "${suiteName}": its ${kind} hook threw${where}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      throw error;
    }
  };
}

function guarded(suiteName: string, original: Hooks, kind: string): Hooks {
  const each = original.each;
  return Object.assign((hook: Hook) => original(guard(suiteName, kind, hook)), {
    each: (hook: Hook) => each(guard(suiteName, `${kind}.each`, hook)),
  });
}

export function suite<T = Record<string, unknown>>(name = '', state?: T): uvu.Test<T> {
  const made = uvu.suite<T>(name, state);
  const hooks = made as unknown as { before: Hooks; after: Hooks };
  hooks.before = guarded(name, hooks.before, 'before');
  hooks.after = guarded(name, hooks.after, 'after');
  return made;
}

export const test = suite();
export const exec = uvu.exec;
