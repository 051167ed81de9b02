// The report operations of the OpenAPI document (../openapi.ts): POST /reports, and GET, HEAD and
// DELETE of /reports/{id}.
import {
  cacheControl,
  errorResponse,
  etagHeader,
  forbidden,
  forbiddenText,
  header,
  idempotencyKey,
  ifMatch,
  ifNoneMatch,
  insufficientScope,
  type Json,
  jsonContent,
  keyReused,
  methodNotAllowed,
  notModified,
  preconditionFailed,
  ref,
  reportIdParam,
  unauthorized,
  unavailable,
  unopened,
} from '../openapi-parts.js';

export function createReportOperation(): Record<string, Json> {
  return {
    operationId: 'createReport',
    tags: ['reports'],
    summary: 'Create a report',
    description:
      'Creates a report. Retrying with the same id, name and tag returns the existing report and writes nothing. Needs a token with the scope write.',
    parameters: [idempotencyKey, ifMatch, ifNoneMatch],
    requestBody: { required: true, content: jsonContent(ref('NewReport')) },
    responses: {
      '200': {
        description: 'The report, read back from the projected state',
        content: jsonContent(ref('Report')),
      },
      '400': errorResponse('Body is not valid JSON or does not match NewReport'),
      '401': unauthorized,
      '403': {
        description: `${forbiddenText('write')}; or, to a token without the scope read, a create with If-Match or with If-None-Match other than * (such a create never writes: it only asks the version)`,
        headers: {
          'WWW-Authenticate': header(
            'Bearer realm="reports", error="insufficient_scope", scope="write" (scope="read" to a create that only asks the version) (RFC 6750)',
          ),
        },
      },
      '405': methodNotAllowed,
      '409': errorResponse(
        'A report with this id exists with a different name or tag; or it exists, whatever the body, and the token does not have the scope read',
      ),
      '412': preconditionFailed,
      '413': errorResponse('Body larger than the configured limit'),
      '415': errorResponse('Content-Type is not application/json'),
      '422': keyReused,
      '503': unavailable,
    },
  };
}

export function getReportOperation(): Record<string, Json> {
  return {
    operationId: 'getReport',
    tags: ['reports'],
    summary: 'Read a report',
    description:
      'The report as the projected state holds it, caught up with every write made before the request on any instance, with its version as ETag. ' +
      'With If-None-Match naming that version: 304 without a body. Needs a token with the scope read.',
    parameters: [reportIdParam('read'), ifNoneMatch, ifMatch],
    responses: {
      '200': {
        description: 'The report',
        headers: { ETag: etagHeader, 'Cache-Control': cacheControl },
        content: jsonContent(ref('Report')),
      },
      '304': notModified,
      '400': errorResponse('The id is not a decimal int64, or If-Match or If-None-Match is malformed'),
      '401': unauthorized,
      '403': forbidden('read'),
      '404': errorResponse('No such report (never created, or deleted)'),
      '405': methodNotAllowed,
      '412': preconditionFailed,
      '500': unopened,
      '503': unavailable,
    },
  };
}

/** HEAD answers as GET without a body, so its responses carry headers and no content. */
export function headReportOperation(): Record<string, Json> {
  return {
    operationId: 'headReport',
    tags: ['reports'],
    summary: 'The headers of a report read',
    description:
      'As GET, with the same status and headers (ETag, Content-Type, Content-Length) and no body. Needs a token with the scope read.',
    parameters: [reportIdParam('read'), ifNoneMatch, ifMatch],
    responses: {
      '200': { description: 'The report exists', headers: { ETag: etagHeader, 'Cache-Control': cacheControl } },
      '304': notModified,
      '400': { description: 'The id is not a decimal int64, or If-Match or If-None-Match is malformed' },
      '401': {
        description: 'Missing, malformed or unknown bearer token',
        headers: { 'WWW-Authenticate': header('Bearer realm="reports" (RFC 6750)') },
      },
      '403': { description: forbiddenText('read'), headers: { 'WWW-Authenticate': insufficientScope('read') } },
      '404': { description: 'No such report' },
      '405': {
        description: 'Known path, wrong method',
        headers: { Allow: header('The methods this path accepts') },
      },
      '412': { description: 'A precondition does not hold' },
      '500': { description: 'The content of the report cannot be opened' },
      '503': {
        description: 'Not caught up in time; retry',
        headers: { 'Retry-After': header('Seconds to wait before retrying') },
      },
    },
  };
}

export function deleteReportOperation(): Record<string, Json> {
  return {
    operationId: 'deleteReport',
    tags: ['reports'],
    summary: 'Delete a report',
    description:
      'Deletes a single report by id. The id may be created again afterwards. Needs a token with the scope write.',
    parameters: [reportIdParam('delete'), idempotencyKey, ifMatch, ifNoneMatch],
    responses: {
      '204': { description: 'Deleted' },
      '400': errorResponse('The id is not a decimal int64, or If-Match or If-None-Match is malformed'),
      '401': unauthorized,
      '403': forbidden('write'),
      '404': errorResponse('No such report (never created, or already deleted)'),
      '405': methodNotAllowed,
      '412': preconditionFailed,
      '422': keyReused,
      '503': unavailable,
    },
  };
}
