/**
 * The transport: one request on the client's undici pool (the key in a header or, by choice, the
 * query), and the bounded readers of answer bodies.
 */
import { type Dispatcher, FormData } from 'undici';
import type { OperationEntry } from './catalogue';
import type { Attempt } from './client-attempt';
import type { ClientContext } from './client-settings';
import { OpenPlatformError } from './errors';
import type { OperationRow } from './operation-types';
import { redactUrl } from './redact';

/** What `request` sends for a catalogue operation. */
export interface PreparedRequest {
  path: string;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Send one request to the platform; the caller reads (or dumps) the body. A workflow operation's
 * body is its query (GET) or JSON body (POST); `prepared` carries a catalogue operation's own
 * path, query, headers and body.
 */
export async function send(
  ctx: ClientContext,
  entry:
    | Pick<OperationEntry, 'operationId' | 'method' | 'path'>
    | Pick<OperationRow, 'operationId' | 'method' | 'path'>,
  body: Record<string, unknown>,
  attempt: Attempt,
  signal: AbortSignal,
  accept: string,
  prepared?: PreparedRequest,
): Promise<Dispatcher.ResponseData> {
  const query = new URLSearchParams();
  if (prepared) appendQuery(query, prepared.query);
  else if (entry.method === 'GET') appendQuery(query, body);
  if (ctx.settings.auth === 'query') query.set('apikey', attempt.apiKey as string);
  const search = query.toString();
  const path = `${ctx.basePath}${prepared?.path ?? entry.path}${search === '' ? '' : `?${search}`}`;
  const headers: Record<string, string> = {
    ...(prepared?.headers ?? {}),
    accept,
    'user-agent': ctx.settings.userAgent,
  };
  if (ctx.settings.auth === 'header') headers['authorization'] = `Bearer ${attempt.apiKey}`;
  let payload: string | FormData | undefined;
  if (prepared) {
    if (prepared.body instanceof FormData) payload = prepared.body;
    else if (prepared.body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(prepared.body);
    }
  } else if (entry.method === 'POST') {
    // JSON even for the streaming operations, whose declared text/event-stream is a known defect.
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  ctx.log(
    'debug',
    'open platform call',
    {
      operationId: entry.operationId,
      method: entry.method,
      url: redactUrl(`${ctx.base.origin}${path}`),
      auth: ctx.settings.auth,
    },
    ctx.secretsOf(attempt),
  );
  const response = await ctx.dispatcher.request({
    origin: ctx.base.origin,
    path,
    method: entry.method,
    headers,
    body: payload,
    signal,
    headersTimeout: ctx.settings.headersTimeoutMs,
    bodyTimeout: ctx.settings.bodyTimeoutMs,
  });
  attempt.httpStatus = response.statusCode;
  attempt.headers = response.headers;
  return response;
}

/** GET parameters: scalars as text, arrays repeated, objects as JSON. */
export function appendQuery(query: URLSearchParams, body: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) {
      query.append(name, typeof item === 'object' && item !== null ? JSON.stringify(item) : String(item));
    }
  }
}

export async function readLimitedBytes(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      (body as { destroy?: () => void }).destroy?.();
      throw new OpenPlatformError({
        kind: 'protocol',
        message: `the document is larger than the accepted ${maxBytes} bytes`,
      });
    }
    chunks.push(chunk);
  }
  const result = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    result.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return result;
}

/** A whole answer body as text; one longer than `maxBytes` is a protocol error (and is not read on). */
export async function readAnswerText(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  operationId: string,
): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      body.destroy();
      throw new OpenPlatformError({
        kind: 'protocol',
        message: `${operationId}: the answer is larger than the accepted ${maxBytes} bytes`,
        operationId,
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The first `maxBytes` of a body (an error answer's details), the rest dropped. */
export async function readLimitedText(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    const room = maxBytes - total;
    chunks.push(chunk.byteLength > room ? chunk.subarray(0, room) : chunk);
    total += Math.min(chunk.byteLength, room);
    if (total >= maxBytes) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}
