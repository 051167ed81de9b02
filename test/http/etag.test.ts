import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BadRequestError } from '../../src/errors.js';
import { ENTITY_TAGS_PATTERN, parsePreconditions, reportEtag } from '../../src/http/etag.js';

const etag = suite('reportEtag');
etag('is the version as a quoted decimal, a strong ETag', () => {
  assert.is(reportEtag(1), '"1"');
  assert.is(reportEtag(2 ** 31 + 1), '"2147483649"');
});
etag.run();

const parse = suite('parsePreconditions');
parse('is empty without the headers', () => {
  assert.equal(parsePreconditions(undefined, undefined), {});
});
parse('reads * as any version, and a list of tags as the versions they name', () => {
  assert.equal(parsePreconditions('*', undefined), { ifMatch: { kind: 'any' } });
  assert.equal(parsePreconditions('"3", "5"', '"7"'), {
    ifMatch: { kind: 'versions', versions: [3, 5] },
    ifNoneMatch: { kind: 'versions', versions: [7] },
  });
});
parse('skips weak tags in If-Match (strong comparison) and keeps them in If-None-Match (weak comparison)', () => {
  assert.equal(parsePreconditions('W/"3", "5"', 'W/"3"'), {
    ifMatch: { kind: 'versions', versions: [5] },
    ifNoneMatch: { kind: 'versions', versions: [3] },
  });
});
parse("keeps well-formed tags that are no report's ETag out of the versions: they match nothing", () => {
  assert.equal(parsePreconditions('"abc", "03", "+3", "", "1e3", "99999999999999999"', undefined), {
    ifMatch: { kind: 'versions', versions: [] },
  });
});
parse('accepts empty list elements and spaces around commas (RFC 9110 5.6.1)', () => {
  assert.equal(parsePreconditions(', "1" ,,\t"2",', undefined), { ifMatch: { kind: 'versions', versions: [1, 2] } });
});
for (const value of [
  '',
  ' ',
  '3',
  '"3',
  '3"',
  'W/3',
  'w/"3"',
  '"3" "4"',
  '"3";"4"',
  '*, "3"',
  '**',
  '"a"b"',
  '"é"',
  ',',
]) {
  parse(`refuses ${JSON.stringify(value)} with a 400 naming the header`, () => {
    assert.throws(
      () => parsePreconditions(value, undefined),
      (error: unknown) => error instanceof BadRequestError && /If-Match/.test(error.message),
    );
    assert.throws(
      () => parsePreconditions(undefined, value),
      (error: unknown) => error instanceof BadRequestError && /If-None-Match/.test(error.message),
    );
    assert.not.ok(new RegExp(ENTITY_TAGS_PATTERN).test(value), 'the OpenAPI pattern must refuse it too');
  });
}
parse.run();
