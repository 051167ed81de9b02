// Bytes <-> events. Pure; a consumer reading the topic decodes with the same function the service uses.
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  PlainReportCreatedData,
  ReportCreated,
  ReportDeleted,
  ReportEvent,
  SealedReportCreatedData,
} from './events.js';

const checkEvent = TypeCompiler.Compile(ReportEvent);
// A union's own error says only "Expected union value" at the root; checking against the variant
// the value names in `type` gives a reason with the path of the field that is wrong.
const checkVariant = {
  ReportCreated: TypeCompiler.Compile(ReportCreated),
  ReportDeleted: TypeCompiler.Compile(ReportDeleted),
};
// A create's data is sealed or in the clear: the reason comes from the form it says it has.
const checkCreatedData = {
  sealed: TypeCompiler.Compile(SealedReportCreatedData),
  plain: TypeCompiler.Compile(PlainReportCreatedData),
};

export type Decoded =
  { readonly ok: true; readonly event: ReportEvent } | { readonly ok: false; readonly reason: string };

const INT64_DIGITS = '9223372036854775807';

/** For a canonical decimal string (the schema's pattern): whether it fits in a signed 64-bit integer. */
function inInt64(id: string): boolean {
  const digits = id.startsWith('-') ? id.slice(1) : id;
  if (digits.length !== INT64_DIGITS.length) return digits.length < INT64_DIGITS.length;
  return id.startsWith('-') ? digits <= '9223372036854775808' : digits <= INT64_DIGITS;
}

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
  if (checkEvent.Check(parsed)) {
    // Beyond what the schema can say: the subject (also the Kafka key) names the same report as the data, within int64.
    if (parsed.subject !== parsed.data.id) return { ok: false, reason: '/subject: must equal /data/id' };
    if (!inInt64(parsed.data.id)) return { ok: false, reason: '/data/id: outside the int64 range' };
    return { ok: true, event: parsed };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { ok: false, reason: '/: value is not a JSON object' };
  const type: unknown = (parsed as { type?: unknown }).type;
  if (type !== 'ReportCreated' && type !== 'ReportDeleted')
    return { ok: false, reason: '/type: must be ReportCreated or ReportDeleted' };
  const first = checkVariant[type].Errors(parsed).First();
  const data: unknown = (parsed as { data?: unknown }).data;
  if (type === 'ReportCreated' && first?.path === '/data' && typeof data === 'object' && data !== null) {
    const inData = checkCreatedData['sealed' in data ? 'sealed' : 'plain'].Errors(data).First();
    if (inData) return { ok: false, reason: `/data${inData.path}: ${inData.message}` };
  }
  return { ok: false, reason: first ? `${first.path || '/'}: ${first.message}` : `not a valid ${type} CloudEvent` };
}
