/**
 * The platform's answer envelope `{data, status, error_code, error_msg}` and the response headers
 * opflow reads (`x-correlation-id`, `x-openapi-amount`, `Retry-After`), parsed leniently: booleans
 * may arrive as "true"/"false" and numbers as numeric strings (see lenient.ts). Also turns an error
 * answer into an {@link OpenPlatformError}.
 */
import * as z from 'zod';
import { errorMessage } from '../errors/error-message';
import { formatIssues } from '../errors/zod-issues';
import { errorCodeTable, kindFor, OpenPlatformError } from './errors';
import { lenientBoolean, lenientInt, lenientNumber, lenientString } from './lenient';

/** The envelope as it travels; `status` may be left out when `error_code` says it all. */
export const envelopeSchema = z.preprocess(
  (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const record = value as Record<string, unknown>;
    if (record['status'] !== undefined || record['error_code'] === undefined) return value;
    // Some gateway answers carry only a code; "0" means success like everywhere else.
    const code = Number(record['error_code']);
    return Number.isFinite(code) ? { ...record, status: code === 0 } : value;
  },
  z.looseObject({
    data: z.unknown().optional(),
    status: lenientBoolean,
    error_code: lenientInt.nullish(),
    error_msg: lenientString.nullish(),
  }),
);

export interface Envelope {
  data: unknown;
  status: boolean;
  /** 0 when the envelope had none. */
  errorCode: number;
  errorMessage: string | undefined;
}

export type EnvelopeParse = { ok: true; envelope: Envelope } | { ok: false; problem: string };

/** Parse a decoded JSON value as an envelope, saying what is wrong when it is not one. */
export function parseEnvelopeValue(value: unknown): EnvelopeParse {
  const parsed = envelopeSchema.safeParse(value);
  if (!parsed.success) return { ok: false, problem: `not an answer envelope: ${formatIssues(parsed.error)}` };
  const { data, status, error_code, error_msg } = parsed.data;
  return {
    ok: true,
    envelope: { data, status, errorCode: error_code ?? 0, errorMessage: error_msg ?? undefined },
  };
}

/** Parse an answer body as an envelope; an empty, truncated or non-JSON body is a problem. */
export function parseEnvelopeText(text: string): EnvelopeParse {
  if (text.trim() === '') return { ok: false, problem: 'the answer body is empty' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = errorMessage(error);
    return { ok: false, problem: `the answer body is not valid JSON (${reason}; ${text.length} characters)` };
  }
  return parseEnvelopeValue(value);
}

/** The response headers opflow reads, as undici hands them over. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** One header's value (the first when repeated), matched case-insensitively. */
export function headerValue(headers: ResponseHeaders, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

export function correlationIdOf(headers: ResponseHeaders): string | undefined {
  const value = headerValue(headers, 'x-correlation-id')?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** Units billed for the call (`x-openapi-amount`), 0 when absent or not a number. */
export function billedUnitsOf(headers: ResponseHeaders): number {
  const parsed = lenientNumber.safeParse(headerValue(headers, 'x-openapi-amount')?.trim());
  return parsed.success && parsed.data >= 0 ? parsed.data : 0;
}

/**
 * Milliseconds to wait according to `Retry-After`: delay-seconds or an HTTP date (relative to
 * `nowMs`). Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP date names its day and month; Date.parse alone would read "-3" as the year -3.
  if (!/[a-z]{3}/i.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

export interface ErrorAnswer {
  operationId: string;
  httpStatus: number;
  envelope?: Envelope | undefined;
  /** Why the body could not be read as an envelope, for non-2xx answers without one. */
  bodyProblem?: string | undefined;
  correlationId?: string | undefined;
  retryAfterMs?: number | undefined;
}

/** The error for an answer that says the call failed (non-2xx, or an envelope with status false). */
export function errorFromAnswer(answer: ErrorAnswer): OpenPlatformError {
  const code = answer.envelope && answer.envelope.errorCode !== 0 ? answer.envelope.errorCode : undefined;
  const kind = kindFor(answer.httpStatus, code);
  const known = code === undefined ? undefined : errorCodeTable[code]?.meaning;
  const upstream = answer.envelope?.errorMessage?.trim();
  const what = [known, upstream && upstream !== known ? `upstream says "${clip(upstream, 300)}"` : undefined]
    .filter(Boolean)
    .join('; ');
  const where = [
    `HTTP ${answer.httpStatus}`,
    code === undefined ? undefined : `code ${code}`,
    answer.correlationId === undefined ? undefined : `correlation id ${answer.correlationId}`,
  ]
    .filter(Boolean)
    .join(', ');
  return new OpenPlatformError({
    kind,
    message: `${answer.operationId} failed (${kind}): ${what || answer.bodyProblem || 'no details'} [${where}]`,
    operationId: answer.operationId,
    httpStatus: answer.httpStatus,
    code,
    correlationId: answer.correlationId,
    retryAfterMs: answer.retryAfterMs,
  });
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
