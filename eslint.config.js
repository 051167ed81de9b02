// Type-aware linting of src/, projections/ and test/ (`npm run lint`, run first by `npm test`).
// The rules that matter most here are the async ones the type checker cannot see: a promise nobody
// awaits (its rejection is lost, or it crashes the process), an async callback handed to an API
// that ignores its result, `await` on a value that is not a promise, an `async` that awaits nothing.
// typescript-eslint needs TypeScript's JavaScript API, which TypeScript 7 does not have: the
// package named `typescript` is TypeScript 6.0 for the linter only, `tsc` is TypeScript 7 (docs/development.md).
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', '.cache/**'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      // One program for the one tsconfig.json that holds every file: 3 s quicker than projectService.
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // In the recommended set already; named here because they are why the linter exists.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/require-await': 'error',
      // `return promise` inside try/catch/finally: the catch never sees its rejection.
      '@typescript-eslint/return-await': ['error', 'error-handling-correctness-only'],
      // An AbortSignal's reason (typed any) and a rejection being passed on (unknown) are handed on
      // unchanged, as Node's own APIs do; rejecting with a string or a number is still reported.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // Off: tsc already refuses unused locals and parameters (noUnusedLocals, noUnusedParameters).
      '@typescript-eslint/no-unused-vars': 'off',
    },
  },
);
