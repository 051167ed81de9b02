// Writes histories straight into an embedded log (openFileLog), for what the server never writes:
// void events, records that are not events, keys that do not match; and finds where each record
// starts on disk, so tests can damage one.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeEvent } from '../../projections/codec.js';
import type { ReportEvent } from '../../projections/events.js';
import type { LogMessage } from '../../src/log/event-log.js';
import { FILE_MAGIC } from '../../src/log/file/frames.js';
import { scanFrames } from '../../src/log/file/recovery.js';
import { openFileLog } from '../../src/log/file/file-log.js';
import { memoryLogger } from './server.js';

/** An event (keyed by its subject) or a raw record. */
export type Entry = ReportEvent | LogMessage;

export function message(entry: Entry): LogMessage {
  return 'specversion' in entry ? { key: entry.subject, value: encodeEvent(entry) } : entry;
}

/** A record with a valid frame whose value is JSON but not an event. */
export function notAnEvent(key = '1'): LogMessage {
  return { key, value: Buffer.from(JSON.stringify({ hello: 'world' })) };
}

/** Appends `entries` to the log in `dir` (created if missing), one record each, in order. */
export async function appendToFileLog(dir: string, entries: readonly Entry[]): Promise<void> {
  const log = await openFileLog({ dir, logger: memoryLogger().logger });
  try {
    if (entries.length > 0) await log.append(entries.map(message));
  } finally {
    await log.close();
  }
}

export function eventsLogPath(dir: string): string {
  return join(dir, 'events.log');
}

/** The byte at which each record's frame starts. */
export async function frameStarts(dir: string): Promise<number[]> {
  const file = await open(eventsLogPath(dir), 'r');
  try {
    return (await scanFrames(file, FILE_MAGIC.length)).starts;
  } finally {
    await file.close();
  }
}

/** Flips every bit of the byte at `position` of `path`. */
export async function flipByte(path: string, position: number): Promise<void> {
  const file = await open(path, 'r+');
  try {
    const byte = Buffer.alloc(1);
    await file.read(byte, 0, 1, position);
    byte[0] = (byte[0] ?? 0) ^ 0xff;
    await file.write(byte, 0, 1, position);
  } finally {
    await file.close();
  }
}
