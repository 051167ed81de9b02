// How a variable's text becomes a value.
// Empty or blank means unset. A number is taken exactly as written: spaces around it are an error
// for every numeric setting (" 5 " is most likely a quoting mistake, and a value that is refused
// at start is cheaper than one that is silently read another way).
import { ConfigError } from './config-error.js';
import type { ConfigVariable, Env } from './variables.js';

export function text(env: Env, name: ConfigVariable): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** A numeric setting's text: undefined when empty or blank; an error when spaces surround it. */
function numeric(env: Env, name: ConfigVariable): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  if (raw.trim() !== raw) throw new ConfigError(name, `must be written without spaces around it, got "${raw}"`);
  return raw;
}

export function integer(env: Env, name: ConfigVariable, fallback: number, min: number, max: number): number {
  const raw = numeric(env, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${raw}`);
  return value;
}

export function bool(env: Env, name: ConfigVariable): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined || ['0', 'false', 'no', 'off'].includes(raw)) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

export function oneOf<T extends string>(env: Env, name: ConfigVariable, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  const found = allowed.find((value) => value === raw);
  if (found === undefined) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return found;
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, kib: 1024, mb: 1024 ** 2, mib: 1024 ** 2 };

export function byteSize(env: Env, name: ConfigVariable, fallback: number, max = 8 * 1024 ** 2): number {
  const raw = numeric(env, name);
  if (raw === undefined) return fallback;
  const match = /^(\d+)\s*([a-z]*)$/i.exec(raw);
  const unit = SIZE_UNITS[match?.[2]?.toLowerCase() ?? 'x'];
  if (!match || unit === undefined)
    throw new ConfigError(name, `must be a size such as 65536, 64kb or 1mb, got "${raw}"`);
  const bytes = Number(match[1]) * unit;
  if (bytes < 1024 || bytes > max)
    throw new ConfigError(name, `must be between 1kb and ${max / 1024 ** 2}mb, got "${raw}"`);
  return bytes;
}
