/**
 * An error answer the sandbox gives on purpose (the platform's envelope with `status: false`).
 * Operation handlers throw it; the dispatcher turns it into the HTTP answer.
 */
import { PlatformCode } from './constants';

export class SandboxRejection extends Error {
  override readonly name = 'SandboxRejection';

  constructor(
    readonly httpStatus: number,
    readonly code: number,
    message: string,
    /** Extra response headers, e.g. `Retry-After`. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** The platform's invalid-parameter answer: HTTP 200, 68300004. */
export function invalidParameter(message: string): SandboxRejection {
  return new SandboxRejection(200, PlatformCode.invalidParameter, message);
}

/** A step called before the step it depends on: the invalid-parameter answer, saying what is out of order. */
export function outOfOrder(message: string): SandboxRejection {
  return invalidParameter(`out of order: ${message}`);
}

/** An identifier the sandbox never handed out (or handed to another key): HTTP 404, 67200101. */
export function notFound(field: string, id: string): SandboxRejection {
  return new SandboxRejection(404, PlatformCode.notFound, `${field} '${id}' not found`);
}
