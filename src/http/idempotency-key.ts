import { BadRequestError } from '../errors.js';

export const IDEMPOTENCY_KEY_MAX_CHARS = 255;

/** The optional `Idempotency-Key` header: absent, or 1 to 255 visible ASCII characters (an empty one is 400). */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (header.length === 0 || header.length > IDEMPOTENCY_KEY_MAX_CHARS || !/^[\x21-\x7e]+$/.test(header)) {
    throw new BadRequestError(
      `the Idempotency-Key header must be 1 to ${IDEMPOTENCY_KEY_MAX_CHARS} visible ASCII characters`,
    );
  }
  return header;
}
