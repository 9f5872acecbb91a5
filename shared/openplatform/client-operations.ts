/**
 * Catalogue operations: any of the platform's operations called by id or reference, its
 * parameters and body checked against the generated schemas before anything is sent.
 */

import type * as z from 'zod';
import { errorMessage } from '../errors/error-message';
import { formatIssues } from '../errors/zod-issues';
import {
  type Attempt,
  describeBody,
  errorFromResponse,
  failAttempt,
  limitSignal,
  protocolError,
  refuseUnusableKey,
  succeedAttempt,
  successEnvelope,
} from './client-attempt';
import { type ClientContext, parseCallOptions } from './client-settings';
import { isChatStream } from './client-streams';
import { type PreparedRequest, readAnswerText, send, type TransportResponse } from './client-transport';
import { correlationIdOf, headerValue } from './envelope';
import { OpenPlatformError } from './errors';
import { readEventList } from './event-list';
import { loadOperationSchemas } from './operation-schemas';
import type { OperationRow } from './operation-types';
import { fillPath, lookupOperation } from './operations';
import { readEventStream } from './stream';
import type { OperationCallResult, OperationRequest, StreamOptions } from './types';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

async function prepare(row: OperationRow, input: OperationRequest): Promise<PreparedRequest> {
  const schemas = await loadOperationSchemas(row);
  const invalid = (what: string) =>
    new OpenPlatformError({
      kind: 'invalid-request',
      message: `${row.operationId}: ${what}, nothing was sent`,
      operationId: row.operationId,
    });
  const parameters = schemas.parameters.safeParse(input.parameters ?? {});
  if (!parameters.success) {
    const takes = row.parameters.map((parameter) => parameter.name);
    throw invalid(
      `invalid parameters: ${formatIssues(parameters.error)}${
        takes.length ? ` (it takes ${takes.join(', ')})` : ' (it takes no parameters)'
      }`,
    );
  }
  let body: unknown;
  if (schemas.body === undefined) {
    const given = input.body;
    if (given !== undefined && !(isPlainObject(given) && Object.keys(given).length === 0)) {
      throw invalid(`${row.method} ${row.path} takes no request body`);
    }
  } else {
    const parsedBody = schemas.body.safeParse(input.body ?? {});
    if (!parsedBody.success) throw invalid(`the request body is invalid: ${formatIssues(parsedBody.error)}`);
    body = parsedBody.data;
  }
  const values = parameters.data;
  const query: Record<string, unknown> = {};
  const headers: Record<string, string> = {};
  const pathValues: Record<string, unknown> = {};
  // The hand-written schema of a workflow GET holds its query parameters.
  const declared = new Map(row.parameters.map((parameter) => [parameter.name, parameter.in]));
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const where = declared.get(name) ?? 'query';
    if (where === 'path') pathValues[name] = value;
    else if (where === 'header') headers[name.toLowerCase()] = String(value);
    else query[name] = value;
  }
  let path: string;
  try {
    path = fillPath(row, pathValues);
  } catch (error) {
    throw invalid(errorMessage(error).replace(`${row.operationId}: `, ''));
  }
  if (row.bodyEncoding === 'multipart' && body !== undefined) {
    const form = new FormData();
    for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
      if (value === undefined || value === null) continue;
      for (const item of Array.isArray(value) ? value : [value]) {
        if (item instanceof Blob) form.append(name, item, item instanceof File ? item.name : name);
        else form.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item));
      }
    }
    return { path, query, headers, body: form };
  }
  return { path, query, headers, body };
}

/** Call any catalogue operation by id or reference: parameters and body checked, the answer by its form. */
export async function requestOperation(
  ctx: ClientContext,
  idOrRef: string,
  input: OperationRequest = {},
  callOptions?: StreamOptions,
): Promise<OperationCallResult> {
  const found = lookupOperation(String(idOrRef));
  if (!found.ok) throw new OpenPlatformError({ kind: 'invalid-request', message: found.message });
  const row = found.operation;
  const opts = parseCallOptions(row.operationId, callOptions);
  const attempt: Attempt = {
    operationId: row.operationId,
    repeatable: row.effect === 'read',
    apiKey: opts.apiKey ?? ctx.settings.apiKey,
    started: ctx.settings.now(),
    timedOut: false,
    callerSignal: opts.signal,
  };
  if (ctx.isClosed()) {
    throw new OpenPlatformError({
      kind: 'invalid-request',
      message: 'the client is closed',
      operationId: row.operationId,
    });
  }
  let limit: ReturnType<typeof limitSignal> | undefined;
  try {
    const prepared = await prepare(row, input);
    if (!attempt.apiKey) {
      throw new OpenPlatformError({
        kind: 'auth',
        message: `${row.operationId}: no API key (give the client an apiKey or pass one with the call)`,
        operationId: row.operationId,
      });
    }
    refuseUnusableKey(attempt.apiKey, row.operationId);
    limit = limitSignal(
      attempt,
      opts.timeoutMs ?? (row.stream ? ctx.settings.timeoutMs : ctx.overallTimeoutMs),
    );
    const accept = row.stream ? 'text/event-stream, application/json' : 'application/json';
    const response = await send(ctx, row, {}, attempt, limit.signal, accept, prepared);
    if (response.statusCode < 200 || response.statusCode > 299) {
      throw await errorFromResponse(ctx, row, response);
    }
    const contentType = headerValue(response.headers, 'content-type') ?? '';
    const schemas = await loadOperationSchemas(row);
    let data: unknown;
    if (row.stream && !/\bjson\b/i.test(contentType)) {
      const context = {
        operationId: row.operationId,
        httpStatus: response.statusCode,
        correlationId: correlationIdOf(response.headers),
        retryableAfterSend: attempt.repeatable,
      };
      if (isChatStream(row.operationId)) {
        data = await readEventStream(response.body, {
          context,
          onText: opts.onText,
          idleTimeoutMs: ctx.settings.streamIdleTimeoutMs,
          maxBytes: ctx.settings.maxAnswerBytes,
          abort: () => response.body.destroy(),
        });
      } else {
        const frames = await readEventList(response.body, context, ctx.settings.maxAnswerBytes);
        data = frames.map((frame, index) =>
          checkData(row, schemas.data, frame, response, `event ${index + 1}`),
        );
      }
    } else {
      const text = await readAnswerText(response.body, ctx.settings.maxAnswerBytes, row.operationId);
      data = answerData(row, schemas.data, text, response, ctx.settings.now());
    }
    const usage = succeedAttempt(ctx, attempt);
    return { operation: row, data, usage };
  } catch (error) {
    throw failAttempt(ctx, attempt, error);
  } finally {
    limit?.release();
  }
}

/** A catalogue operation's answer data, by its answer form, checked against its schema. */
function answerData(
  row: OperationRow,
  schema: z.ZodType,
  text: string,
  response: TransportResponse,
  nowMs: number,
): unknown {
  const correlationId = correlationIdOf(response.headers);
  if (row.answer === 'plain') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw protocolError(row.operationId, response.statusCode, correlationId, describeBody(text));
    }
    return checkData(row, schema, value, response, 'the answer');
  }
  const envelope = successEnvelope(row, text, response, nowMs);
  if (row.answer === 'flat') return checkData(row, schema, JSON.parse(text), response, 'the answer');
  return checkData(row, schema, envelope.data ?? {}, response, "the answer's data");
}

function checkData(
  row: OperationRow,
  schema: z.ZodType,
  value: unknown,
  response: TransportResponse,
  what: string,
): unknown {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw protocolError(
    row.operationId,
    response.statusCode,
    correlationIdOf(response.headers),
    `${what} does not have the expected shape: ${formatIssues(parsed.error)}`,
  );
}
