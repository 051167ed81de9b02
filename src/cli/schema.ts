// `reports schema events|openapi|asyncapi`: the JSON Schemas of the events, the OpenAPI document
// of the HTTP interface, or the AsyncAPI document of the topic.
import { eventsJsonSchema } from '../../projections/json-schema.js';
import { loadConfig } from '../config.js';
import { createAsyncApiDocument, topicFacts } from '../http/asyncapi.js';
import { createOpenApiDocument } from '../http/openapi.js';
import { SERVICE_VERSION } from '../version.js';
import { UsageError, type CliIo, type CommandSpec, type ParsedCommand } from './usage.js';

export const schemaCommand = {
  name: 'schema',
  usage: 'reports schema events|openapi|asyncapi',
  description: [
    'Prints, as JSON on stdout, the JSON Schemas of the events (ReportCreated, ReportDeleted in their CloudEvents',
    'envelope), the OpenAPI 3.1 document of the HTTP interface, or the AsyncAPI 3.1 document of the topic.',
  ].join('\n'),
  options: {},
  positionals: { min: 1, max: 1 },
} satisfies CommandSpec;

export function runSchema({ positionals }: ParsedCommand, io: CliIo): number {
  const what = positionals[0];
  if (what === 'events') {
    io.stdout.write(`${JSON.stringify(eventsJsonSchema(), null, 2)}\n`);
  } else if (what === 'openapi') {
    const config = loadConfig(io.env);
    const limits = { nameMaxChars: config.nameMaxChars, tagMaxChars: config.tagMaxChars };
    io.stdout.write(
      `${JSON.stringify(createOpenApiDocument(limits, SERVICE_VERSION, { metricsToken: config.metricsTokens.length > 0 }), null, 2)}\n`,
    );
  } else if (what === 'asyncapi') {
    io.stdout.write(
      `${JSON.stringify(createAsyncApiDocument(topicFacts(loadConfig(io.env)), SERVICE_VERSION), null, 2)}\n`,
    );
  } else {
    throw new UsageError(`unknown schema "${what}": expected events, openapi or asyncapi`, schemaCommand.usage);
  }
  return 0;
}
