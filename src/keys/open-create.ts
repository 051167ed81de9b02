// What a tool makes of a create's content with the key the store holds for it (`reports events`,
// `verify`, `migrate`): in the clear as it was written, opened with its key, or not to be had: no
// key in the store (destroyed because the report was deleted or the create was void; or missing: a
// lost key, another producer's) or a key that does not open the box (damage).
import { isSealed, type ReportCreated } from '../../projections/events.js';
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
  if (!isSealed(data)) return { kind: 'plain', content: data.tag === undefined ? { name: data.name } : { name: data.name, tag: data.tag } };
  const keyId = data.sealed.key;
  if (key === undefined) return { kind: 'erased', keyId };
  const content = openContent(data.sealed, key.secret, { id: data.id, ...(expectedversion === undefined ? {} : { expectedversion }) });
  return content === undefined ? { kind: 'unopenable', keyId } : { kind: 'opened', content, keyId, key };
}
