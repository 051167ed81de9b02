/** The bearer token every test server accepts. */
export const TEST_TOKEN = 'test-token-0123456789-abcdef';
