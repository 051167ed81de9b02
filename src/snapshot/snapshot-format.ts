// The snapshot file format: two lines, the SHA-256 (hex) of the second line, then the body as
// JSON. A file whose checksum does not match is never trusted.
import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { IdempotencyState, KeyedAnswer } from '../../projections/idempotency.js';
import type { ReportsState, StoredReport } from '../../projections/reports.js';
import type { Cursor } from '../log/event-log.js';

// Format 2 added `anchors`; a format-1 snapshot cannot be checked against the log and is ignored.
export const SNAPSHOT_FORMAT = 2 as const;

export interface Snapshot {
  /** Which log the positions belong to (`EventLog.identity`). */
  readonly log: string;
  readonly cursor: Cursor;
  /** Records folded to reach this state. */
  readonly events: number;
  readonly createdAt: string;
  readonly reports: ReportsState;
  readonly keys: IdempotencyState;
}

/**
 * Per partition with records folded: a digest of the last record folded (the one at cursor - 1),
 * or null when no record is there (an offset Kafka never delivers). Ties the snapshot to the exact
 * history it folded, not only to the log's name.
 */
export type Anchors = ReadonlyMap<number, string | null>;

export interface StoredSnapshot extends Snapshot {
  readonly anchors: Anchors;
}

// The body's shape, checked before anything in it is used: a checksum only proves the file is
// what some writer wrote, not that it is a snapshot.
const ReportRow = Type.Union([Type.Tuple([Type.String(), Type.String()]), Type.Tuple([Type.String(), Type.String(), Type.String()])]);
const Status = Type.Union([Type.Literal(200), Type.Literal(204), Type.Literal(404), Type.Literal(409)]);
const KeyRow = Type.Union([
  Type.Tuple([Type.String(), Type.String(), Status]),
  Type.Tuple([Type.String(), Type.String(), Type.Literal(200), Type.String()]),
  Type.Tuple([Type.String(), Type.String(), Type.Literal(200), Type.String(), Type.String()]),
]);
const Body = Type.Object({
  format: Type.Literal(SNAPSHOT_FORMAT),
  log: Type.String(),
  cursor: Type.Array(Type.Tuple([Type.Integer({ minimum: 0 }), Type.Integer({ minimum: 0 })])),
  events: Type.Integer({ minimum: 0 }),
  createdAt: Type.String(),
  reports: Type.Array(ReportRow),
  keys: Type.Array(KeyRow),
  anchors: Type.Array(Type.Tuple([Type.Integer({ minimum: 0 }), Type.Union([Type.String(), Type.Null()])])),
});
type Body = Static<typeof Body>;
type ReportRow = Static<typeof ReportRow>;
type KeyRow = Static<typeof KeyRow>;
const checkBody = TypeCompiler.Compile(Body);

function reportRow(id: string, { name, tag }: StoredReport): ReportRow {
  return tag === undefined ? [id, name] : [id, name, tag];
}

/** A copy of the view that later records cannot change (the projector's maps are live). */
export function detachSnapshot(snapshot: Snapshot): Snapshot {
  return { ...snapshot, cursor: new Map(snapshot.cursor), reports: new Map(snapshot.reports), keys: new Map(snapshot.keys) };
}

export function encodeSnapshot(snapshot: StoredSnapshot): Buffer {
  const body: Body = {
    format: SNAPSHOT_FORMAT,
    log: snapshot.log,
    cursor: [...snapshot.cursor],
    events: snapshot.events,
    createdAt: snapshot.createdAt,
    reports: [...snapshot.reports].map(([id, report]) => reportRow(id, report)),
    keys: [...snapshot.keys].map(([key, { fingerprint, answer }]): KeyRow => {
      if (answer.status !== 200) return [key, fingerprint, answer.status];
      const [, name, tag] = reportRow('', answer.report);
      return tag === undefined ? [key, fingerprint, 200, name] : [key, fingerprint, 200, name, tag];
    }),
    anchors: [...snapshot.anchors],
  };
  const text = JSON.stringify(body);
  return Buffer.from(`${createHash('sha256').update(text).digest('hex')}\n${text}\n`, 'utf8');
}

export type Decoded = { readonly ok: true; readonly snapshot: StoredSnapshot } | { readonly ok: false; readonly reason: string };

export function decodeSnapshot(file: Buffer): Decoded {
  const text = file.toString('utf8');
  const newline = text.indexOf('\n');
  const checksum = text.slice(0, newline);
  const bodyText = text.slice(newline + 1).replace(/\n$/, '');
  if (newline !== 64 || createHash('sha256').update(bodyText).digest('hex') !== checksum) return { ok: false, reason: 'checksum mismatch' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return { ok: false, reason: 'body is not JSON' };
  }
  const format = (parsed as { format?: unknown } | null)?.format;
  if (format === 1) return { ok: false, reason: 'format 1 (an older version) records no anchor to check it against the log' };
  if (format !== SNAPSHOT_FORMAT) return { ok: false, reason: `unknown format ${String(format)}` };
  if (!checkBody.Check(parsed)) return { ok: false, reason: `body has the wrong shape at ${checkBody.Errors(parsed).First()?.path ?? '/'}` };
  const body = parsed;
  const reports: ReportsState = new Map(body.reports.map(([id, name, tag]) => [id, tag === undefined ? { name } : { name, tag }]));
  const keys: IdempotencyState = new Map(
    body.keys.map(([key, fingerprint, status, name, tag]) => {
      const answer: KeyedAnswer = status === 200 ? { status, report: tag === undefined ? { name: name ?? '' } : { name: name ?? '', tag } } : { status };
      return [key, { fingerprint, answer }];
    }),
  );
  return { ok: true, snapshot: { log: body.log, cursor: new Map(body.cursor), events: body.events, createdAt: body.createdAt, reports, keys, anchors: new Map(body.anchors) } };
}
