/**
 * One typed error family for everything that can go wrong when calling the Open Platform.
 *
 * Callers decide on `kind` and `retryable`, never on message text. The mapping from HTTP statuses
 * and business `error_code`s to kinds is the table `errorCodeTable` / `httpStatusTable` below; each
 * row has a test (test/unit/openplatform/errors.test.ts).
 */
import type { CallUsage } from './types';

export type OpenPlatformErrorKind =
  | 'auth'
  | 'forbidden'
  | 'not-found'
  | 'invalid-request'
  | 'throttled'
  | 'quota-exhausted'
  | 'busy'
  | 'server'
  | 'network'
  | 'timeout'
  | 'protocol';

export interface OpenPlatformErrorDetails {
  kind: OpenPlatformErrorKind;
  message: string;
  operationId?: string | undefined;
  httpStatus?: number | undefined;
  /** The business `error_code` of the envelope, when there was one. */
  code?: number | undefined;
  correlationId?: string | undefined;
  /** Milliseconds the upstream asked us to wait (`Retry-After`), when it said so. */
  retryAfterMs?: number | undefined;
  /** Overrides the kind's default, e.g. a network failure of a non-idempotent POST is not retryable. */
  retryable?: boolean | undefined;
  /**
   * The request provably never left this machine (the connection could not be made), so the
   * upstream did nothing and billed nothing: a create may be sent again without being a repeat.
   */
  unsent?: boolean | undefined;
  /** What the failed call cost (the client fills this in; also reported through `onUsage`). */
  usage?: CallUsage | undefined;
  cause?: unknown;
}

/** Whether a kind, by itself, is worth retrying later. */
export const retryableKinds: Readonly<Record<OpenPlatformErrorKind, boolean>> = {
  auth: false,
  forbidden: false,
  'not-found': false,
  'invalid-request': false,
  throttled: true,
  'quota-exhausted': false,
  busy: true,
  server: true,
  network: true,
  timeout: true,
  protocol: false,
};

export class OpenPlatformError extends Error {
  override readonly name = 'OpenPlatformError';
  readonly kind: OpenPlatformErrorKind;
  readonly retryable: boolean;
  readonly operationId: string | undefined;
  readonly httpStatus: number | undefined;
  readonly code: number | undefined;
  readonly correlationId: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly usage: CallUsage | undefined;
  readonly unsent: boolean;

  constructor(details: OpenPlatformErrorDetails) {
    super(details.message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = details.kind;
    this.retryable = details.retryable ?? retryableKinds[details.kind];
    this.operationId = details.operationId;
    this.httpStatus = details.httpStatus;
    this.code = details.code;
    this.correlationId = details.correlationId;
    this.retryAfterMs = details.retryAfterMs;
    this.usage = details.usage;
    this.unsent = details.unsent === true;
  }

  /** A plain, serialisable summary (for job records and logs). Never contains the API key. */
  toJSON() {
    return {
      name: this.name,
      kind: this.kind,
      message: this.message,
      retryable: this.retryable,
      operationId: this.operationId,
      httpStatus: this.httpStatus,
      code: this.code,
      correlationId: this.correlationId,
    };
  }
}

export function isOpenPlatformError(value: unknown): value is OpenPlatformError {
  return value instanceof OpenPlatformError;
}

/** Business codes that arrive inside the envelope (sometimes with HTTP 200). */
export const errorCodeTable: Readonly<Record<number, { kind: OpenPlatformErrorKind; meaning: string }>> = {
  67200002: { kind: 'throttled', meaning: 'calls are faster than the key’s QPS limit' },
  67200000: { kind: 'quota-exhausted', meaning: 'the account’s total call limit is exceeded' },
  67200001: { kind: 'quota-exhausted', meaning: 'the account’s total call limit is exceeded' },
  67200004: { kind: 'forbidden', meaning: 'the key has no permission for this operation' },
  67200202: { kind: 'auth', meaning: 'API key authentication error' },
  67200008: { kind: 'auth', meaning: 'API key not accepted' },
  67200101: { kind: 'not-found', meaning: 'path not found' },
  68300004: { kind: 'invalid-request', meaning: 'invalid parameter' },
  68300005: { kind: 'server', meaning: 'search failure' },
  68300006: { kind: 'forbidden', meaning: 'analytic access error' },
  68300007: { kind: 'invalid-request', meaning: 'bad request' },
  68300008: { kind: 'busy', meaning: 'service busy, try again later' },
  68300010: { kind: 'invalid-request', meaning: 'file does not meet the upload rules' },
};

/** HTTP statuses, for answers without a recognised business code. 5xx not listed map to `server`. */
export const httpStatusTable: Readonly<Record<number, OpenPlatformErrorKind>> = {
  400: 'invalid-request',
  401: 'auth',
  403: 'forbidden',
  404: 'not-found',
  408: 'timeout',
  409: 'invalid-request',
  413: 'invalid-request',
  422: 'invalid-request',
  429: 'throttled',
};

/** The kind for an error answer: the business code wins over the HTTP status when it is known. */
export function kindFor(httpStatus: number | undefined, code: number | undefined): OpenPlatformErrorKind {
  if (code !== undefined && code !== 0) {
    const row = errorCodeTable[code];
    if (row) return row.kind;
  }
  if (httpStatus !== undefined) {
    const kind = httpStatusTable[httpStatus];
    if (kind) return kind;
    if (httpStatus >= 500) return 'server';
    if (httpStatus >= 400) return 'invalid-request';
  }
  return code !== undefined && code !== 0 ? 'server' : 'protocol';
}
