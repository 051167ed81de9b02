// Turns a parsed body into a CreateCommand, or a 400 whose message names the field.
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { BadRequestError } from '../errors.js';
import type { CreateCommand } from '../reports/decide.js';
import { INT64_MAX, INT64_MIN, newReportSchema, type FieldLimits } from './schemas.js';

export type NewReportParser = (body: unknown) => CreateCommand;

/** A field limit the compiled check never reaches: lengths are checked in code points below. */
const UNCHECKED_LENGTHS: FieldLimits = { nameMaxChars: Number.MAX_SAFE_INTEGER, tagMaxChars: Number.MAX_SAFE_INTEGER };

/** The characters of `text` as JSON Schema's maxLength counts them: Unicode code points, a surrogate pair being one. */
export function codePointCount(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdbff) continue;
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) {
      pairs += 1;
      i += 1;
    }
  }
  return text.length - pairs;
}

/** Whether `text` has more than `max` code points; most strings are settled by their UTF-16 length alone. */
function longerThan(text: string, max: number): boolean {
  return text.length > max && codePointCount(text) > max;
}

/**
 * A UTF-16 surrogate without its pair: JSON's `\ud800` escapes can carry one, UTF-8 cannot. Stored,
 * it became U+FFFD, so a report read back differed from the one created, and an identical retry
 * of the create answered 409.
 */
const LONE_SURROGATE = /\p{Cs}/u;

export function createNewReportParser(limits: FieldLimits): NewReportParser {
  // /openapi.json gives name and tag the schema's maxLength, which JSON Schema counts in code points;
  // TypeBox's compiled check counts UTF-16 units (JavaScript's length) and refused 2,049 emoji
  // against a maximum of 4,096. So the compiled schema checks the shape, and the lengths are
  // checked here as the document counts them.
  const check = TypeCompiler.Compile(newReportSchema(UNCHECKED_LENGTHS));
  const messages = {
    id: `id must be an integer between ${INT64_MIN} and ${INT64_MAX}`,
    name: 'name must be a string',
    tag: 'tag must be a string or null',
  } as const;
  const tooLong = {
    name: `name must be at most ${limits.nameMaxChars} characters`,
    tag: `tag must be at most ${limits.tagMaxChars} characters`,
  } as const;
  const illFormed = (field: 'name' | 'tag') =>
    new BadRequestError(`${field} must be well-formed Unicode: it holds a lone UTF-16 surrogate (\\ud800-\\udfff)`);

  return (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new BadRequestError('request body must be a JSON object');
    const fields = { ...(body as Record<string, unknown>) };
    if (fields['tag'] === null) delete fields['tag'];
    if (check.Check(fields)) {
      const { id, name, tag } = fields;
      if (longerThan(name, limits.nameMaxChars)) throw new BadRequestError(tooLong.name);
      if (LONE_SURROGATE.test(name)) throw illFormed('name');
      if (tag === undefined) return { id: id.toString(), name };
      if (longerThan(tag, limits.tagMaxChars)) throw new BadRequestError(tooLong.tag);
      if (LONE_SURROGATE.test(tag)) throw illFormed('tag');
      return { id: id.toString(), name, tag };
    }
    for (const field of ['id', 'name', 'tag'] as const) {
      if (field !== 'tag' && !(field in fields)) throw new BadRequestError(`${field} is required`);
      const failed = check.Errors(fields).First();
      if (failed?.path === `/${field}`) throw new BadRequestError(messages[field]);
    }
    throw new BadRequestError('request body does not match the NewReport schema');
  };
}

/** Parses the `{id}` path parameter: a decimal int64, returned in canonical form. */
export function parseReportId(raw: string): string {
  if (!/^-?[0-9]{1,19}$/.test(raw))
    throw new BadRequestError(
      `report id must be a decimal integer between ${INT64_MIN} and ${INT64_MAX}, got "${raw.slice(0, 40)}"`,
    );
  const id = BigInt(raw);
  if (id < INT64_MIN || id > INT64_MAX)
    throw new BadRequestError(
      `report id must be a decimal integer between ${INT64_MIN} and ${INT64_MAX}, got "${raw}"`,
    );
  return id.toString();
}
