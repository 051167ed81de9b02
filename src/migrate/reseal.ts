// How `reports migrate` copies a create: always sealed anew, under a key the target's store mints,
// so that every key id the target's events name is the target store's own (keys.db numbers its
// slots, the key topic draws random ids: a source's id could name another key there). Content that
// is live at the end of the source and opens (or was written in the clear: "seals as it copies") is
// sealed under a key the target keeps. Any other content (a deleted report's, a void create's, a
// live one whose key is missing) gets a box of random bytes of its box's length under a key that is
// destroyed at once (target-writer.ts): it opens nowhere, as before, and the event folds exactly as
// it did. Such a key carries a random digest, never the content's (a digest of a short name is as
// good as the name).
import { randomBytes } from 'node:crypto';
import type { ReportCreated } from '../../projections/events.js';
import { contentBytes, contentDigest, SEAL_TAG_BYTES, sealContent } from '../../projections/sealing.js';
import { keyIdText, type ContentKey } from '../keys/key-store.js';
import type { OpenedCreate } from '../keys/open-create.js';

export interface Resealed {
  readonly event: ReportCreated;
  readonly key: ContentKey;
  /** Whether the target keeps the key (the content is live); otherwise it is destroyed at once. */
  readonly live: boolean;
}

export interface ResealOptions {
  /** The create makes the report that is live at the end of the source's history. */
  readonly live: boolean;
  /** A new key of the target's store for content with this digest. */
  readonly mint: (contentDigest: Buffer) => ContentKey;
  readonly random?: (bytes: number) => Buffer;
}

/** A live create whose key is there but does not open its content: the copy cannot carry it. */
export class UnopenableContentError extends Error {
  constructor(id: string, keyId: string) {
    super(`the content of live report ${id} does not open with its key ${keyId}; run \`reports verify\``);
    this.name = 'UnopenableContentError';
  }
}

/** `event` sealed anew for the target, from what the source's keys made of its content. */
export function resealCreate(
  event: ReportCreated,
  opened: OpenedCreate,
  { live, mint, random = randomBytes }: ResealOptions,
): Resealed {
  const { id, idempotencyKey } = event.data;
  const context = { id, ...(event.expectedversion === undefined ? {} : { expectedversion: event.expectedversion }) };
  const data = (sealed: { key: string; box: string }): ReportCreated['data'] => ({
    id,
    sealed,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
  });
  if (live && opened.kind === 'unopenable') throw new UnopenableContentError(id, opened.keyId);
  if (live && (opened.kind === 'plain' || opened.kind === 'opened')) {
    const key = mint(contentDigest(opened.content));
    return {
      event: { ...event, data: data(sealContent(opened.content, keyIdText(key.id), key.secret, context)) },
      key,
      live: true,
    };
  }
  const key = mint(random(32));
  return {
    event: {
      ...event,
      data: data({ key: keyIdText(key.id), box: random(boxBytes(event, opened)).toString('base64') }),
    },
    key,
    live: false,
  };
}

/** The length of the box `event` has, or would have sealed. */
function boxBytes(event: ReportCreated, opened: OpenedCreate): number {
  if (opened.kind === 'plain' || opened.kind === 'opened') return contentBytes(opened.content).length + SEAL_TAG_BYTES;
  return 'sealed' in event.data ? Buffer.from(event.data.sealed.box, 'base64').length : SEAL_TAG_BYTES;
}
