/**
 * One attempt and its error mapping: starting a call, its overall time limit, turning whatever it
 * throws into a redacted {@link OpenPlatformError} that says whether retrying is safe, reading an
 * answer's envelope, and reporting the attempt's cost.
 */
import type * as z from 'zod';
import { formatIssues } from '../errors/zod-issues';
import { type OperationEntry, type OperationId, similarOperationNames } from './catalogue';
import type { ClientContext } from './client-settings';
import { readLimitedText, type TransportResponse } from './client-transport';
import {
  billedUnitsOf,
  correlationIdOf,
  errorFromAnswer,
  headerValue,
  parseEnvelopeText,
  parseRetryAfter,
  type ResponseHeaders,
} from './envelope';
import { OpenPlatformError, type OpenPlatformErrorKind } from './errors';
import { redactError, redactSecret } from './redact';
import { requestSchemas } from './schemas/requests';
import { responseDataSchemas } from './schemas/responses';
import type { CallUsage } from './types';

/** Errors that happen before a connection exists: the request cannot have reached the server. */
const beforeConnectCodes = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'EADDRNOTAVAIL',
  'CONNECT_TIMEOUT',
]);

/** One call in flight: what it is, who pays, and what is known of its answer so far. */
export interface Attempt {
  operationId: string;
  /** Whether repeating the request is harmless (reads), deciding retryability after sending. */
  repeatable: boolean;
  apiKey: string | undefined;
  started: number;
  httpStatus?: number | undefined;
  headers?: ResponseHeaders | undefined;
  timedOut: boolean;
  callerSignal?: AbortSignal | undefined;
}

const usageOf = (
  ctx: ClientContext,
  attempt: Attempt,
  ok: boolean,
  errorKind?: OpenPlatformErrorKind,
): CallUsage => ({
  operationId: attempt.operationId,
  durationMs: Math.max(0, ctx.settings.now() - attempt.started),
  httpStatus: attempt.httpStatus,
  correlationId: attempt.headers ? correlationIdOf(attempt.headers) : undefined,
  billedUnits: attempt.headers ? billedUnitsOf(attempt.headers) : 0,
  ok,
  errorKind,
});

const report = (ctx: ClientContext, usage: CallUsage, attempt: Attempt) => {
  if (!ctx.settings.onUsage) return;
  try {
    ctx.settings.onUsage(usage);
  } catch (error) {
    ctx.log(
      'warn',
      'onUsage callback failed',
      { operationId: usage.operationId, error: String(error) },
      ctx.secretsOf(attempt),
    );
  }
};

/** Turn anything thrown into a redacted OpenPlatformError carrying the call's usage; report it. */
export function failAttempt(ctx: ClientContext, attempt: Attempt, error: unknown): OpenPlatformError {
  const secrets = ctx.secretsOf(attempt);
  const classified = error instanceof OpenPlatformError ? error : classifyFailure(error, attempt);
  const usage = usageOf(ctx, attempt, false, classified.kind);
  const final = new OpenPlatformError({
    kind: classified.kind,
    message: redactSecret(classified.message, secrets),
    operationId: classified.operationId ?? attempt.operationId,
    httpStatus: classified.httpStatus ?? attempt.httpStatus,
    code: classified.code,
    correlationId: classified.correlationId ?? usage.correlationId,
    retryAfterMs: classified.retryAfterMs,
    retryable: classified.retryable,
    unsent: classified.unsent,
    usage,
    cause: classified.cause === undefined ? undefined : redactError(classified.cause, secrets),
  });
  report(ctx, usage, attempt);
  ctx.log(
    final.retryable ? 'warn' : 'error',
    'open platform call failed',
    {
      operationId: final.operationId,
      kind: final.kind,
      retryable: final.retryable,
      httpStatus: final.httpStatus,
      code: final.code,
      correlationId: final.correlationId,
      durationMs: usage.durationMs,
      billedUnits: usage.billedUnits,
      message: final.message,
    },
    secrets,
  );
  return final;
}

/** Report and log a successful attempt's cost. */
export function succeedAttempt(
  ctx: ClientContext,
  attempt: Attempt,
  extra: Record<string, unknown> = {},
): CallUsage {
  const usage = usageOf(ctx, attempt, true);
  report(ctx, usage, attempt);
  ctx.log(
    'info',
    'open platform call done',
    {
      operationId: usage.operationId,
      httpStatus: usage.httpStatus,
      correlationId: usage.correlationId,
      durationMs: usage.durationMs,
      billedUnits: usage.billedUnits,
      ...extra,
    },
    ctx.secretsOf(attempt),
  );
  return usage;
}

/** One signal for the caller's abort and the overall limit; remembers which one fired. */
export function limitSignal(attempt: Attempt, timeoutMs: number | undefined) {
  const controller = new AbortController();
  const onAbort = () => controller.abort(attempt.callerSignal?.reason);
  if (attempt.callerSignal?.aborted) controller.abort(attempt.callerSignal.reason);
  else attempt.callerSignal?.addEventListener('abort', onAbort, { once: true });
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          attempt.timedOut = true;
          controller.abort(new Error(`overall time limit of ${timeoutMs} ms reached`));
        }, timeoutMs);
  timer?.unref?.();
  return {
    signal: controller.signal,
    release: () => {
      if (timer) clearTimeout(timer);
      attempt.callerSignal?.removeEventListener('abort', onAbort);
    },
  };
}

/** A new attempt of one call (refused once the client is closed). */
export function startAttempt(
  ctx: ClientContext,
  entry: OperationEntry | undefined,
  operationId: string,
  callOptions: { signal?: AbortSignal | undefined; apiKey?: string | undefined },
): Attempt {
  if (ctx.isClosed()) {
    throw new OpenPlatformError({ kind: 'invalid-request', message: 'the client is closed', operationId });
  }
  return {
    operationId,
    repeatable: entry ? entry.effect === 'read' : true,
    apiKey: callOptions.apiKey ?? ctx.settings.apiKey,
    started: ctx.settings.now(),
    timedOut: false,
    callerSignal: callOptions.signal,
  };
}

/** A workflow operation's body, checked against its schema; a call without a key is refused. */
export function validateBody(
  entry: OperationEntry,
  body: unknown,
  attempt: Attempt,
): Record<string, unknown> {
  const schema = requestSchemas[entry.operationId as OperationId] as z.ZodType;
  const result = schema.safeParse(body);
  if (!result.success) {
    throw new OpenPlatformError({
      kind: 'invalid-request',
      message: `${entry.operationId} request body is invalid, nothing was sent: ${formatIssues(result.error)}`,
      operationId: entry.operationId,
    });
  }
  if (!attempt.apiKey) {
    throw new OpenPlatformError({
      kind: 'auth',
      message: `${entry.operationId}: no API key (give the client an apiKey or pass one with the call)`,
      operationId: entry.operationId,
    });
  }
  refuseUnusableKey(attempt.apiKey, entry.operationId);
  return result.data as Record<string, unknown>;
}

/**
 * A key with a line break or another control character (pasted with its newline) cannot go in a
 * header: fetch would fail it as a network error, retried for nothing. Refused before any call.
 */
export function refuseUnusableKey(apiKey: string, operationId: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  const control = /[\u0000-\u001f\u007f]/.exec(apiKey);
  if (!control) return;
  const name =
    control[0] === '\n'
      ? 'a line feed (LF)'
      : control[0] === '\r'
        ? 'a carriage return (CR)'
        : 'a control character';
  throw new OpenPlatformError({
    kind: 'auth',
    message: `${operationId}: the API key holds ${name} at character ${control.index + 1} (pasted with a line break?); set OPFLOW_API_KEY again without it`,
    operationId,
  });
}

/** The error for a non-2xx answer, reading its body for an envelope. */
export async function errorFromResponse(
  ctx: ClientContext,
  entry: { operationId: string },
  response: TransportResponse,
): Promise<OpenPlatformError> {
  let text = '';
  try {
    text = await readLimitedText(response.body, 64 * 1024);
  } catch {
    // The status already says it failed; a body we cannot read adds nothing.
  }
  const envelope = parseEnvelopeText(text);
  return errorFromAnswer({
    operationId: entry.operationId,
    httpStatus: response.statusCode,
    envelope: envelope.ok ? envelope.envelope : undefined,
    bodyProblem: envelope.ok ? undefined : describeBody(text),
    correlationId: correlationIdOf(response.headers),
    retryAfterMs: parseRetryAfter(headerValue(response.headers, 'retry-after'), ctx.settings.now()),
  });
}

export function successEnvelope(
  entry: { operationId: string },
  text: string,
  response: TransportResponse,
  nowMs: number,
) {
  const correlationId = correlationIdOf(response.headers);
  const parsed = parseEnvelopeText(text);
  if (!parsed.ok) throw protocolError(entry.operationId, response.statusCode, correlationId, parsed.problem);
  if (!parsed.envelope.status) {
    throw errorFromAnswer({
      operationId: entry.operationId,
      httpStatus: response.statusCode,
      envelope: parsed.envelope,
      correlationId,
      retryAfterMs: parseRetryAfter(headerValue(response.headers, 'retry-after'), nowMs),
    });
  }
  return parsed.envelope;
}

/** The typed data of a successful answer, or the error its envelope stands for. */
export function parseSuccess(
  entry: OperationEntry,
  text: string,
  response: TransportResponse,
  nowMs: number,
): unknown {
  const correlationId = correlationIdOf(response.headers);
  const envelope = successEnvelope(entry, text, response, nowMs);
  // Update operations may answer `data: null`; every data field is optional anyway.
  const schema = responseDataSchemas[entry.operationId as OperationId] as z.ZodType;
  const data = schema.safeParse(envelope.data ?? {});
  if (!data.success) {
    throw protocolError(
      entry.operationId,
      response.statusCode,
      correlationId,
      `the answer's data does not have the expected shape: ${formatIssues(data.error)}`,
    );
  }
  return data.data;
}

export function protocolError(
  operationId: string,
  httpStatus: number,
  correlationId: string | undefined,
  problem: string,
): OpenPlatformError {
  return new OpenPlatformError({
    kind: 'protocol',
    message: `${operationId}: unreadable answer: ${problem}${correlationId ? ` [correlation id ${correlationId}]` : ''}`,
    operationId,
    httpStatus,
    correlationId,
  });
}

/** Map a transport failure to a kind, and decide whether repeating the request is safe. */
export function classifyFailure(error: unknown, attempt: Attempt): OpenPlatformError {
  const codes = errorCodes(error);
  const beforeConnect = codes.some((code) => beforeConnectCodes.has(code));
  // After a connection existed the request may have reached the server: only reads may be repeated.
  const retryable = beforeConnect || attempt.repeatable;
  const base = { operationId: attempt.operationId, httpStatus: attempt.httpStatus, cause: error };
  const reason = describeTransportError(error);
  if (attempt.timedOut) {
    return new OpenPlatformError({
      ...base,
      kind: 'timeout',
      retryable: attempt.repeatable,
      message: `${attempt.operationId} timed out: ${reason}`,
    });
  }
  if (attempt.callerSignal?.aborted) {
    const reasonValue: unknown = attempt.callerSignal.reason;
    const isTimeout = reasonValue instanceof Error && reasonValue.name === 'TimeoutError';
    return new OpenPlatformError({
      ...base,
      kind: isTimeout ? 'timeout' : 'network',
      retryable: attempt.repeatable,
      message: `${attempt.operationId} was aborted by the caller${isTimeout ? ' (time limit)' : ''}`,
    });
  }
  if (codes.includes('CONNECT_TIMEOUT')) {
    return new OpenPlatformError({
      ...base,
      kind: 'timeout',
      retryable: true,
      unsent: true,
      message: `${attempt.operationId}: connecting timed out (nothing was sent)`,
    });
  }
  if (codes.includes('HEADERS_TIMEOUT') || codes.includes('BODY_TIMEOUT')) {
    const which = codes.includes('HEADERS_TIMEOUT') ? 'waiting for the answer' : 'reading the answer';
    return new OpenPlatformError({
      ...base,
      kind: 'timeout',
      retryable,
      message: `${attempt.operationId} timed out ${which}${retryable ? '' : ' (the request may have been processed)'}`,
    });
  }
  // Closed after the headers arrived: the answer was cut off. (A FIN and a reset look the same at
  // this point; either way the request was processed, so only reads may be repeated.)
  if (codes.includes('CUT_OFF')) {
    return new OpenPlatformError({
      ...base,
      kind: 'protocol',
      retryable: attempt.repeatable,
      message: `${attempt.operationId}: the answer was cut off before its end (${reason})${
        attempt.repeatable ? '' : '; the request was processed'
      }`,
    });
  }
  return new OpenPlatformError({
    ...base,
    kind: 'network',
    retryable,
    unsent: beforeConnect,
    message: beforeConnect
      ? `${attempt.operationId}: could not connect (${reason}; nothing was sent)`
      : `${attempt.operationId}: network failure (${reason})${retryable ? '' : '; the request may have been processed'}`,
  });
}

/** Every `code` in an error, its causes and aggregated errors. */
function errorCodes(error: unknown, depth = 0): string[] {
  if (typeof error !== 'object' || error === null || depth > 6) return [];
  const record = error as Record<string, unknown>;
  const own = typeof record['code'] === 'string' ? [record['code']] : [];
  const inner = Array.isArray(record['errors'])
    ? record['errors'].flatMap((item) => errorCodes(item, depth + 1))
    : [];
  return [...own, ...inner, ...errorCodes(record['cause'], depth + 1)];
}

function describeTransportError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const message =
    error.message || (error instanceof AggregateError ? 'several addresses failed' : error.name);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

export function unknownOperation(name: string): OpenPlatformError {
  const matches = similarOperationNames(name);
  return new OpenPlatformError({
    kind: 'invalid-request',
    message: `unknown operation "${name.slice(0, 100)}"${matches.length ? `; did you mean ${matches.join(', ')}?` : ''}`,
  });
}

export function describeBody(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return 'the answer had no body';
  const clipped = trimmed.replace(/\s+/g, ' ').slice(0, 120);
  return `the answer is not an envelope (body starts "${clipped}")`;
}
