// What a reload changed, for its log line: names added, removed, given another token or other
// scopes, and how many unnamed tokens came and went. Never a token, nor a digest.
import type { TokenSet } from './token-set.js';

export interface TokenChange {
  /** Tokens in the new set. */
  readonly tokens: number;
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Names kept with another token. */
  readonly rotated: readonly string[];
  /** Names kept with other scopes. */
  readonly rescoped: readonly string[];
  readonly unnamedAdded: number;
  readonly unnamedRemoved: number;
}

export function tokenChange(before: TokenSet, after: TokenSet): TokenChange {
  const old = before.describe();
  const next = after.describe();
  const byName = (entries: typeof old) =>
    new Map(entries.flatMap((entry) => (entry.name === undefined ? [] : [[entry.name, entry] as const])));
  const unnamed = (entries: typeof old) =>
    new Set(entries.filter((entry) => entry.name === undefined).map((entry) => entry.digest));
  const oldNames = byName(old);
  const newNames = byName(next);
  const oldUnnamed = unnamed(old);
  const newUnnamed = unnamed(next);
  const kept = [...newNames].flatMap(([name, entry]) => {
    const was = oldNames.get(name);
    return was === undefined ? [] : [{ name, was, entry }];
  });
  const sameScopes = (a: ReadonlySet<string>, b: ReadonlySet<string>) =>
    a.size === b.size && [...a].every((scope) => b.has(scope));
  return {
    tokens: next.length,
    added: [...newNames.keys()].filter((name) => !oldNames.has(name)),
    removed: [...oldNames.keys()].filter((name) => !newNames.has(name)),
    rotated: kept.filter(({ was, entry }) => was.digest !== entry.digest).map(({ name }) => name),
    rescoped: kept.filter(({ was, entry }) => !sameScopes(was.scopes, entry.scopes)).map(({ name }) => name),
    unnamedAdded: [...newUnnamed].filter((digest) => !oldUnnamed.has(digest)).length,
    unnamedRemoved: [...oldUnnamed].filter((digest) => !newUnnamed.has(digest)).length,
  };
}

/** Whether the new set differs from the old in anything a request could tell. */
export function hasChanged({ added, removed, rotated, rescoped, unnamedAdded, unnamedRemoved }: TokenChange): boolean {
  return added.length + removed.length + rotated.length + rescoped.length + unnamedAdded + unnamedRemoved > 0;
}
