// Turns a parsed body into a CreateCommand, or a 400 whose message names the field.
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { BadRequestError } from '../errors.js';
import type { CreateCommand } from '../reports/decide.js';
import { INT64_MAX, INT64_MIN, newReportSchema, type FieldLimits } from './schemas.js';

export type NewReportParser = (body: unknown) => CreateCommand;

export function createNewReportParser(limits: FieldLimits): NewReportParser {
  const check = TypeCompiler.Compile(newReportSchema(limits));
  const messages: Record<string, (value: unknown) => string> = {
    id: () => `id must be an integer between ${INT64_MIN} and ${INT64_MAX}`,
    name: (value) => (typeof value === 'string' ? `name must be at most ${limits.nameMaxChars} characters` : 'name must be a string'),
    tag: (value) => (typeof value === 'string' ? `tag must be at most ${limits.tagMaxChars} characters` : 'tag must be a string or null'),
  };

  return (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequestError('request body must be a JSON object');
    const fields = { ...(body as Record<string, unknown>) };
    if (fields['tag'] === null) delete fields['tag'];
    if (check.Check(fields)) {
      const { id, name, tag } = fields;
      return tag === undefined ? { id: id.toString(), name } : { id: id.toString(), name, tag };
    }
    for (const field of ['id', 'name', 'tag'] as const) {
      if (field !== 'tag' && !(field in fields)) throw new BadRequestError(`${field} is required`);
      const failed = check.Errors(fields).First();
      if (failed?.path === `/${field}`) throw new BadRequestError((messages[field] as (value: unknown) => string)(fields[field]));
    }
    throw new BadRequestError('request body does not match the NewReport schema');
  };
}

/** Parses the `{id}` path parameter: a decimal int64, returned in canonical form. */
export function parseReportId(raw: string): string {
  if (!/^-?[0-9]{1,19}$/.test(raw)) throw new BadRequestError(`report id must be a decimal integer between ${INT64_MIN} and ${INT64_MAX}, got "${raw.slice(0, 40)}"`);
  const id = BigInt(raw);
  if (id < INT64_MIN || id > INT64_MAX) throw new BadRequestError(`report id must be a decimal integer between ${INT64_MIN} and ${INT64_MAX}, got "${raw}"`);
  return id.toString();
}
