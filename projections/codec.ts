// Bytes <-> events. Pure; a consumer reading the topic decodes with the same function the service uses.
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ReportEvent } from './events.js';

const checkEvent = TypeCompiler.Compile(ReportEvent);

export type Decoded = { readonly ok: true; readonly event: ReportEvent } | { readonly ok: false; readonly reason: string };

export function encodeEvent(event: ReportEvent): Buffer {
  return Buffer.from(JSON.stringify(event), 'utf8');
}

/** Parses and validates one record value against the envelope schema. Never throws. */
export function decodeEvent(value: Uint8Array): Decoded {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'));
  } catch {
    return { ok: false, reason: 'value is not JSON' };
  }
  if (checkEvent.Check(parsed)) return { ok: true, event: parsed };
  const first = checkEvent.Errors(parsed).First();
  return { ok: false, reason: first ? `${first.path || '/'}: ${first.message}` : 'not a ReportCreated or ReportDeleted CloudEvent' };
}
