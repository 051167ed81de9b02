// Bytes <-> events. Pure; a consumer reading the topic decodes with the same function the service uses.
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ReportCreated, ReportDeleted, ReportEvent } from './events.js';

const checkEvent = TypeCompiler.Compile(ReportEvent);
// A union's own error says only "Expected union value" at the root; checking against the variant
// the value names in `type` gives a reason with the path of the field that is wrong.
const checkVariant = { ReportCreated: TypeCompiler.Compile(ReportCreated), ReportDeleted: TypeCompiler.Compile(ReportDeleted) };

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
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, reason: '/: value is not a JSON object' };
  const type: unknown = (parsed as { type?: unknown }).type;
  if (type !== 'ReportCreated' && type !== 'ReportDeleted') return { ok: false, reason: '/type: must be ReportCreated or ReportDeleted' };
  const first = checkVariant[type].Errors(parsed).First();
  return { ok: false, reason: first ? `${first.path || '/'}: ${first.message}` : `not a valid ${type} CloudEvent` };
}
