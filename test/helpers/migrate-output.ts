// Reading what `reports migrate` and `reports events` print, to compare a source with its copy.
import type { Env } from '../../src/config.js';
import { lines, reports } from './cli.js';

/** The value of the line `label: value` of the migrate summary. */
export function field(stdout: string, label: string): string | undefined {
  return lines(stdout)
    .find((line) => line.startsWith(`${label}:`))
    ?.slice(label.length + 1)
    .trim();
}

interface PrintedLine {
  readonly erased?: true;
  readonly event: {
    readonly id: string;
    readonly type: string;
    readonly data: { readonly id: string; readonly sealed?: { readonly key: string } };
  };
}

/** One event as `printedEvents` gives it. */
export interface PrintedEvent {
  /** Present for sealed content: whether it was erased. */
  readonly erased?: boolean;
  readonly event: { readonly id: string; readonly type: string; readonly data: { readonly id: string } };
}

/**
 * `reports events` on `env`, as what a copy must print the same: each event, by event id, without
 * position and time, without the key ids (each log's store has its own) and with erased content
 * marked; opened content and content written in the clear print alike.
 */
export async function printedEvents(env: Env): Promise<PrintedEvent[]> {
  const { code, stdout, stderr } = await reports(['events'], { env });
  if (code !== 0) throw new Error(`reports events exited ${code}: ${stderr}`);
  return lines(stdout)
    .map((line) => JSON.parse(line) as PrintedLine)
    .sort((a, b) => (a.event.id < b.event.id ? -1 : 1))
    .map(({ erased, event }): PrintedEvent => {
      if (event.data.sealed === undefined) return { event };
      const { sealed, ...data } = event.data;
      return { erased: erased === true, event: { ...event, data } };
    });
}
