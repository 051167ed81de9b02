// The test request builder shared by the in-process and the child-process server harnesses:
// a bearer token by default (`token: null` for none), and `json` as a body (a string is sent verbatim).
import { TEST_TOKEN } from './token.js';

export type TestRequestInit = RequestInit & { token?: string | null; json?: unknown };
export type TestRequest = (path: string, init?: TestRequestInit) => Promise<Response>;

export function requestTo(url: string): TestRequest {
  return (path, init = {}) => {
    const { token = TEST_TOKEN, json, headers, ...rest } = init;
    const merged = new Headers(headers);
    if (token !== null && !merged.has('Authorization')) merged.set('Authorization', `Bearer ${token}`);
    let body = rest.body;
    if (json !== undefined) {
      body = typeof json === 'string' ? json : JSON.stringify(json);
      if (!merged.has('Content-Type')) merged.set('Content-Type', 'application/json');
    }
    return fetch(`${url}${path}`, { ...rest, headers: merged, body: body ?? null });
  };
}
