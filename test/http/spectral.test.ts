// Both documents are clean under Spectral's default rulesets (`spectral:oas`, `spectral:asyncapi`):
// no error, warning, information or hint, as they are under Redocly and the AsyncAPI parser.
// Spectral is what API platforms and CI linters commonly run on a document they are handed.
import { Document, Spectral, type ISpectralDiagnostic, type RulesetDefinition } from '@stoplight/spectral-core';
// CommonJS without named exports Node can see: the parsers come from its default export.
import spectralParsers from '@stoplight/spectral-parsers';
import { asyncapi, oas } from '@stoplight/spectral-rulesets';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import { createAsyncApiDocument, topicFacts } from '../../src/http/asyncapi.js';
import { createOpenApiDocument } from '../../src/http/openapi.js';
import { SERVICE_VERSION } from '../../src/version.js';

const { Json } = spectralParsers;

async function lint(ruleset: RulesetDefinition, document: unknown, name: string): Promise<ISpectralDiagnostic[]> {
  const spectral = new Spectral();
  spectral.setRuleset(ruleset);
  return spectral.run(new Document(JSON.stringify(document, null, 2), Json, name));
}

const describe = (diagnostics: readonly ISpectralDiagnostic[]) =>
  diagnostics.map((d) => `${d.code} (severity ${d.severity}): ${d.message} at ${d.path.join('/')}`).join('\n');

const config = loadConfig({});
const openApiDocument = () =>
  createOpenApiDocument(
    { nameMaxChars: config.nameMaxChars, tagMaxChars: config.tagMaxChars },
    SERVICE_VERSION,
  ) as Record<string, unknown>;
const asyncApiDocument = () => createAsyncApiDocument(topicFacts(config), SERVICE_VERSION) as Record<string, unknown>;

const openapi = suite('Spectral spectral:oas on the OpenAPI document');

openapi('reports nothing, not even a hint', async () => {
  const diagnostics = await lint(oas as RulesetDefinition, openApiDocument(), 'openapi.json');
  assert.is(diagnostics.length, 0, describe(diagnostics));
});

openapi('reports nothing with /metrics behind REPORTS_METRICS_TOKEN either', async () => {
  const document = createOpenApiDocument(
    { nameMaxChars: config.nameMaxChars, tagMaxChars: config.tagMaxChars },
    SERVICE_VERSION,
    { metricsToken: true },
  );
  const diagnostics = await lint(oas as RulesetDefinition, document, 'openapi.json');
  assert.is(diagnostics.length, 0, describe(diagnostics));
});

openapi('would report a document without a contact (the ruleset is live)', async () => {
  const document = openApiDocument();
  const diagnostics = await lint(
    oas as RulesetDefinition,
    { ...document, info: { ...(document['info'] as object), contact: undefined } },
    'openapi.json',
  );
  assert.ok(
    diagnostics.some((d) => d.code === 'info-contact'),
    describe(diagnostics),
  );
});

openapi.run();

const asyncApi = suite('Spectral spectral:asyncapi on the AsyncAPI document');

asyncApi('reports nothing, not even a hint', async () => {
  const diagnostics = await lint(asyncapi as RulesetDefinition, asyncApiDocument(), 'asyncapi.json');
  assert.is(diagnostics.length, 0, describe(diagnostics));
});

asyncApi('would report a document without a contact (the ruleset is live)', async () => {
  const document = asyncApiDocument();
  const diagnostics = await lint(
    asyncapi as RulesetDefinition,
    { ...document, info: { ...(document['info'] as object), contact: undefined } },
    'asyncapi.json',
  );
  assert.ok(
    diagnostics.some((d) => d.code === 'asyncapi-info-contact'),
    describe(diagnostics),
  );
});

asyncApi.run();
