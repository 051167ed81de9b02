import { variableSpecs } from '../../src/tokens/sources.js';
import { createTokenSet, type CurrentTokens } from '../../src/tokens/token-set.js';

/** The bearer token every test server accepts. */
export const TEST_TOKEN = 'test-token-0123456789-abcdef';

/** The tokens of a server wired by a test itself (createWiredApp): TEST_TOKEN, unnamed, every scope. */
export function testTokens(): CurrentTokens {
  return { current: createTokenSet(variableSpecs([TEST_TOKEN], 'REPORTS_TOKENS')) };
}
