// The HTTP schemas, in TypeBox. The same objects validate requests and generate /openapi.json.
import { Type, type Static } from '@sinclair/typebox';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** A regular expression for the decimal strings (leading zeros allowed) whose value is an int64. */
export function int64DecimalPattern(): string {
  const below = (bound: string): string[] => {
    // Numbers of exactly bound.length digits that are <= bound: a shared prefix, then a smaller digit.
    const options = [bound];
    for (let i = 0; i < bound.length; i++) {
      const digit = Number(bound[i]);
      if (digit > 0) options.push(`${bound.slice(0, i)}[0-${digit - 1}][0-9]{${bound.length - i - 1}}`);
    }
    return options;
  };
  const positive = ['[0-9]{1,18}', ...below(INT64_MAX.toString())];
  const negative = ['[0-9]{1,18}', ...below((-INT64_MIN).toString())];
  return `^(?:${positive.join('|')})$|^-(?:${negative.join('|')})$`;
}

export interface FieldLimits {
  readonly nameMaxChars: number;
  readonly tagMaxChars: number;
}

/**
 * NewReport as validated: `id` arrives as a bigint because the body parser keeps integers exact
 * (the OpenAPI document, openapi/components.ts, renders this as `integer`/`int64`). Unknown
 * properties are allowed and ignored.
 */
export function newReportSchema(limits: FieldLimits) {
  return Type.Object(
    {
      // TypeCompiler writes bigint bounds as `BigInt(<number literal>)`, which rounds 2^63-1 up to
      // 2^63; so the upper bound is the exclusive 2^63, which a double holds exactly (as it does -2^63).
      id: Type.BigInt({
        minimum: INT64_MIN,
        exclusiveMaximum: INT64_MAX + 1n,
        description: 'Identification number of the report (int64, exact)',
      }),
      name: Type.String({ maxLength: limits.nameMaxChars, description: 'The name of the report' }),
      tag: Type.Optional(
        Type.String({
          maxLength: limits.tagMaxChars,
          description: 'Tag that specifies the type of the report; null is treated as absent',
        }),
      ),
    },
    { title: 'NewReport' },
  );
}
export type NewReport = Static<ReturnType<typeof newReportSchema>>;

export function reportSchema(limits: FieldLimits) {
  return Type.Object(
    {
      name: Type.String({ maxLength: limits.nameMaxChars, description: 'The name of the report' }),
      tag: Type.Optional(
        Type.String({ maxLength: limits.tagMaxChars, description: 'Tag that specifies the type of the report' }),
      ),
    },
    { title: 'Report' },
  );
}

export const ErrorBody = Type.Object(
  {
    error: Type.Integer({ format: 'int32', description: 'The HTTP status code of the response' }),
    message: Type.String({ description: 'What went wrong, naming the offending field or header' }),
  },
  { title: 'Error' },
);
export type ErrorBody = Static<typeof ErrorBody>;

/**
 * The `{id}` path parameter: a decimal int64 of 1 to 19 digits, leading zeros allowed (007 is 7). The pattern spells
 * out the range -9223372036854775808..9223372036854775807, so the document admits exactly what the
 * server accepts: up to 18 digits freely, 19 digits only up to the bound.
 */
export const ReportIdParam = Type.String({ pattern: int64DecimalPattern(), description: 'Report id, a decimal int64' });

export const StatusBody = Type.Object({ status: Type.String({ description: 'ok, or ready' }) }, { title: 'Status' });
