// Reads an AsyncAPI document the way consumers' tools do: the official parser (@asyncapi/parser)
// resolves it and reports diagnostics, and Ajv validates messages against the schemas it resolved.
import { DiagnosticSeverity, Parser, type AsyncAPIDocumentInterface, type Diagnostic } from '@asyncapi/parser';
import { Ajv, type ValidateFunction } from 'ajv';

export interface ParsedAsyncApi {
  readonly document: AsyncAPIDocumentInterface | undefined;
  readonly diagnostics: readonly Diagnostic[];
}

/** Diagnostics of one severity (Spectral's numbers: 0 error, 1 warning). */
export function withSeverity(diagnostics: readonly Diagnostic[], severity: 'error' | 'warning'): Diagnostic[] {
  const wanted: number = severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning;
  return diagnostics.filter((diagnostic) => Number(diagnostic.severity) === wanted);
}

export async function parseAsyncApi(document: unknown): Promise<ParsedAsyncApi> {
  const { document: parsed, diagnostics } = await new Parser().parse(JSON.stringify(document));
  return { document: parsed, diagnostics };
}

export const describeDiagnostics = (diagnostics: readonly Diagnostic[]) =>
  diagnostics.map((d) => `${d.severity} ${d.code}: ${d.message} at ${d.path.join('/')}`).join('\n');

/** One Kafka record as a consumer sees it. */
export interface WireRecord {
  readonly key: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly value: unknown;
}

export interface MessageValidators {
  readonly key: ValidateFunction;
  readonly headers: ValidateFunction;
  readonly payload: ValidateFunction;
}

/** Validators for each message of the document, by message name, from the schemas the parser resolved. */
export function messageValidators(document: AsyncAPIDocumentInterface): Map<string, MessageValidators> {
  const ajv = new Ajv({ allErrors: true });
  // The parser marks every schema it resolved with this extension; every other keyword stays strict.
  ajv.addKeyword('x-parser-schema-id');
  // The key topic's values are bytes (`format: binary`): validated as a string of one character a byte.
  ajv.addFormat('binary', true);
  const validators = new Map<string, MessageValidators>();
  for (const message of document.messages().all()) {
    const key = message.bindings().get('kafka')?.value<{ key?: object }>().key;
    const payload = message.payload();
    const headers = message.headers();
    if (key === undefined || payload === undefined || headers === undefined)
      throw new Error(`message ${message.id()} lacks a key, headers or payload schema`);
    validators.set(message.name() ?? message.id(), {
      key: ajv.compile(key),
      headers: ajv.compile(headers.json()),
      payload: ajv.compile(payload.json()),
    });
  }
  return validators;
}

/** The validation errors of `record` against the message its payload names in `type` (empty: valid). */
export function recordProblems(validators: Map<string, MessageValidators>, record: WireRecord): string[] {
  const type = (record.value as { type?: unknown }).type;
  const message = typeof type === 'string' ? validators.get(type) : undefined;
  if (message === undefined) return [`no message named ${String(type)}`];
  const problems: string[] = [];
  for (const [part, validate, value] of [
    ['key', message.key, record.key],
    ['headers', message.headers, record.headers],
    ['payload', message.payload, record.value],
  ] as const) {
    if (!validate(value))
      problems.push(...(validate.errors ?? []).map((e) => `${part}${e.instancePath}: ${e.message ?? 'invalid'}`));
  }
  return problems;
}
