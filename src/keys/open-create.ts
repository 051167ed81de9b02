// What a tool makes of a create's content with the key the store holds for it (`reports events`,
// `verify`, `migrate`, the feed of GET /events): in the clear as it was written, opened with its
// key, or not to be had: no key in the store (destroyed because the report was deleted or the
// create was void; or missing: a lost key, another producer's) or a key that does not open the box
// (damage).
import { isSealed, type PlainReportCreatedData, type ReportCreated } from '../../projections/events.js';
import type { StoredReport } from '../../projections/reports.js';
import { openContent } from '../../projections/sealing.js';
import { parseKeyId, type ContentKey, type KeyId } from './key-store.js';

export type OpenedCreate =
  | { readonly kind: 'plain'; readonly content: StoredReport }
  | { readonly kind: 'opened'; readonly content: StoredReport; readonly keyId: string; readonly key: ContentKey }
  | { readonly kind: 'erased'; readonly keyId: string }
  | { readonly kind: 'unopenable'; readonly keyId: string };

/** What the content of a create needs from a create to be opened: its data and its basis. */
export type CreateToOpen = Pick<ReportCreated, 'data' | 'expectedversion'>;

/** The key id a sealed create's content needs; undefined for content in the clear. */
export function contentKeyId({ data }: CreateToOpen): KeyId | undefined {
  return isSealed(data) ? parseKeyId(data.sealed.key) : undefined;
}

/** The content of `event` opened with `key` (the store's answer for `contentKeyId(event)`). */
export function openCreate({ data, expectedversion }: CreateToOpen, key: ContentKey | undefined): OpenedCreate {
  if (!isSealed(data))
    return {
      kind: 'plain',
      content: data.tag === undefined ? { name: data.name } : { name: data.name, tag: data.tag },
    };
  const keyId = data.sealed.key;
  if (key === undefined) return { kind: 'erased', keyId };
  const content = openContent(data.sealed, key.secret, {
    id: data.id,
    ...(expectedversion === undefined ? {} : { expectedversion }),
  });
  return content === undefined ? { kind: 'unopenable', keyId } : { kind: 'opened', content, keyId, key };
}

/** A create's data with the box left out: the content no key opens (erased, or unopenable). */
export interface BoxlessCreatedData {
  readonly id: string;
  readonly sealed: { readonly key: string };
  readonly idempotencyKey?: string;
}

/** A create as shown to people and consumers: its content in the clear, or without the box no key opens. */
export type ShownCreate = Omit<ReportCreated, 'data'> & { readonly data: PlainReportCreatedData | BoxlessCreatedData };

/**
 * What a line says of a create's content beside the event (`opened` with the key id, `erased` or
 * `unopenable`), and the event as shown: sealed content is never shown, only opened or left out.
 */
export function shownCreate(
  event: ReportCreated,
  opened: OpenedCreate,
): { mark: Record<string, string | boolean>; event: ShownCreate } {
  const { idempotencyKey } = event.data;
  const keyed = idempotencyKey === undefined ? {} : { idempotencyKey };
  switch (opened.kind) {
    case 'plain':
      return { mark: {}, event };
    case 'opened':
      return {
        mark: { opened: opened.keyId },
        event: { ...event, data: { id: event.data.id, ...opened.content, ...keyed } },
      };
    case 'erased':
    case 'unopenable':
      // The box is left out: nothing can open it. What else the log holds in the clear is shown as it is.
      return {
        mark: { [opened.kind]: true },
        event: { ...event, data: { id: event.data.id, sealed: { key: opened.keyId }, ...keyed } },
      };
  }
}
