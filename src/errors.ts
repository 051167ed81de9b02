// Errors are values with an HTTP status. `expose` says the message is safe to show the client;
// one middleware (http/error-body.ts) renders every one of them as the Error body.

export class AppError extends Error {
  readonly expose = true;
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export class BadRequestError extends AppError {
  constructor(message: string) {
    super(400, message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message: string, tokenGiven: boolean, realm = 'reports') {
    // RFC 6750 §3: name the realm; say invalid_token only when a token was actually presented.
    const challenge = tokenGiven ? `Bearer realm="${realm}", error="invalid_token"` : `Bearer realm="${realm}"`;
    super(401, message, { 'WWW-Authenticate': challenge });
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string, scope: string, realm = 'reports') {
    // RFC 6750 §3.1: the token is valid but lacks the scope the request needs, which the challenge names.
    super(403, message, {
      'WWW-Authenticate': `Bearer realm="${realm}", error="insufficient_scope", scope="${scope}"`,
    });
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super(404, message);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(method: string, allowed: readonly string[]) {
    super(405, `method ${method} is not allowed here; allowed: ${allowed.join(', ')}`, { Allow: allowed.join(', ') });
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, message);
  }
}

export class PreconditionFailedError extends AppError {
  constructor(message: string) {
    super(412, message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super(413, `request body is larger than the limit of ${limitBytes} bytes`);
  }
}

export class EventTooLargeError extends AppError {
  constructor(sizeBytes: number, limitBytes: number) {
    super(
      413,
      `the event would be ${sizeBytes} bytes, more than the ${limitBytes} bytes the event log accepts; shorten the name or tag`,
    );
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super(415, message);
  }
}

export class UnprocessableError extends AppError {
  constructor(message: string) {
    super(422, message);
  }
}

/** A live report's content that cannot be opened: its key is missing from the key store (retrying does not help). */
export class UnopenedContentError extends AppError {
  constructor(message: string) {
    super(500, message);
  }
}

export class UnavailableError extends AppError {
  constructor(message: string, retryAfterSeconds = 1) {
    super(503, message, { 'Retry-After': String(retryAfterSeconds) });
  }
}
