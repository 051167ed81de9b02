// Assertions on responses: every JSON body carries `application/json; charset=utf-8`, and every
// error body is exactly `{error: <status>, message}` with a message naming the field or header.
import * as assert from 'uvu/assert';

export const JSON_TYPE = 'application/json; charset=utf-8';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(message: string, actual: unknown): never {
  throw new assert.Assertion({ message, operator: 'fail', expects: undefined, actual });
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Asserts the status (showing the body when it differs) and returns the parsed body. */
export async function expectStatus(response: Response, status: number): Promise<unknown> {
  const body = await bodyOf(response);
  assert.is(response.status, status, `expected ${status}, got ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

export async function expectJson(response: Response, status: number): Promise<unknown> {
  const body = await expectStatus(response, status);
  assert.is(response.headers.get('content-type'), JSON_TYPE);
  return body;
}

/** Asserts an Error body for `status` whose message matches `mentions`; returns the message. */
export async function expectError(response: Response, status: number, mentions?: RegExp): Promise<string> {
  const body = await expectJson(response, status);
  if (!isRecord(body)) fail(`expected an Error object, got ${JSON.stringify(body)}`, body);
  assert.equal(Object.keys(body).sort(), ['error', 'message']);
  assert.is(body['error'], status);
  const message = body['message'];
  if (typeof message !== 'string') fail('the Error message must be a string', message);
  if (mentions !== undefined) assert.match(message, mentions);
  return message;
}

/** Asserts a 200 Report body equal to `expected` (so an absent tag must be absent, not null). */
export async function expectReport(response: Response, expected: { name: string; tag?: string }): Promise<void> {
  assert.equal(await expectJson(response, 200), expected);
}

export async function expectNoContent(response: Response): Promise<void> {
  assert.is(await expectStatus(response, 204), '');
}

export function expectChallenge(response: Response, tokenGiven: boolean): void {
  const challenge = response.headers.get('www-authenticate');
  if (tokenGiven) assert.is(challenge, 'Bearer realm="reports", error="invalid_token"');
  else assert.is(challenge, 'Bearer realm="reports"');
}
