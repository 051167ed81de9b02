// The lines of a tokens file (REPORTS_TOKENS_FILE, or the data directory's `token`), parsed alike
// at a start and at a reload. A line is a token alone (or `sha256:<hex>`), which has every scope, or
// `name scope[,scope] token`. An error names the file and the line, and never a field's text:
// an operator who wrote the fields in another order would otherwise find a token in the log.
import { checkToken, ConfigError } from '../config.js';
import { ALL_SCOPES, isScope, SCOPES, type Scope } from './scopes.js';

export interface TokenLine {
  /** 1-based, as an editor counts. */
  readonly line: number;
  /** A plain token or a `sha256:<hex>` entry. */
  readonly token: string;
  /** Undefined for a token alone. */
  readonly name?: string;
  readonly scopes: ReadonlySet<Scope>;
}

/** Names go into logs and events as they are: short, and nothing that needs quoting anywhere. */
export const TOKEN_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export interface TokenFileOrigin {
  readonly path: string;
  /** The variable a bad file is reported under (REPORTS_TOKENS_FILE, or REPORTS_TOKENS for the generated file). */
  readonly variable: string;
}

export function parseTokenLines(text: string, { path, variable }: TokenFileOrigin): TokenLine[] {
  const parsed: TokenLine[] = [];
  const names = new Map<string, number>();
  for (const [index, raw] of text.split('\n').entries()) {
    const content = raw.trim();
    if (content === '' || content.startsWith('#')) continue;
    const line = index + 1;
    const fail = (reason: string) => new ConfigError(variable, `${path} line ${line}: ${reason}`);
    const fields = content.split(/\s+/);
    if (fields.length !== 1 && fields.length !== 3)
      throw fail(`expected "name scope[,scope] token" or a token alone, got ${fields.length} fields`);
    const token = fields[fields.length - 1] as string;
    try {
      checkToken(token, variable);
    } catch (error) {
      throw error instanceof ConfigError
        ? fail(`${fields.length === 1 ? 'the token' : 'the token (third field)'}: ${error.reason}`)
        : error;
    }
    if (fields.length === 1) {
      parsed.push({ line, token, scopes: ALL_SCOPES });
      continue;
    }
    const [name = '', scopeList = ''] = fields;
    if (!TOKEN_NAME.test(name)) throw fail('the name (first field) must be 1 to 64 letters, digits, ".", "_" or "-"');
    const earlier = names.get(name);
    if (earlier !== undefined)
      throw fail(`the name (first field) is the name of line ${earlier} too; names are unique`);
    names.set(name, line);
    const scopes = scopeList.split(',');
    if (!scopes.every(isScope))
      throw fail(`unknown scope in the second field; the scopes are ${SCOPES.join(' and ')}, separated by commas`);
    parsed.push({ line, token, name, scopes: new Set(scopes) });
  }
  return parsed;
}
