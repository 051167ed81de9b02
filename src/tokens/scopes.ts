// What a token may do. A route names the scope it needs (`auth(ctx, 'read')`); a token outside it
// is answered 403. An unnamed token (a bare line of the tokens file, REPORTS_TOKENS, the generated
// one) has every scope, as every token had before scopes existed.

/** `read`: GET of reports and the event feed. `write`: POST and DELETE. */
export const SCOPES = ['read', 'write'] as const;
export type Scope = (typeof SCOPES)[number];

export const READ: Scope = 'read';
export const WRITE: Scope = 'write';

/** Every scope: what an unnamed token may do. */
export const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

export function isScope(text: string): text is Scope {
  return (SCOPES as readonly string[]).includes(text);
}
