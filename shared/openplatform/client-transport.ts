/**
 * The transport: what the client needs of an HTTP stack ({@link HttpTransport}; the default is
 * Node's own http/https, client-node-http.ts), one request of a call (the key in a header or, by
 * choice, the query), and the bounded readers of answer bodies.
 */
import type { OperationEntry } from './catalogue';
import type { Attempt } from './client-attempt';
import type { ClientContext } from './client-settings';
import type { ResponseHeaders } from './envelope';
import { OpenPlatformError } from './errors';
import type { OperationRow } from './operation-types';
import { redactUrl } from './redact';

/** One HTTP request as the client hands it to its transport. */
export interface TransportRequest {
  /** `http(s)://host[:port]`. */
  origin: string;
  /** Path and query. */
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string | FormData | undefined;
  /** Aborts the request, or the reading of its answer. */
  signal: AbortSignal;
  /** Longest wait for the answer's headers once the request is on a connection. */
  headersTimeout: number;
  /** Longest gap between two pieces of the answer's body. */
  bodyTimeout: number;
}

/** An answer's body: read once, as chunks; `dump` drains it, `destroy` drops it and its connection. */
export interface ResponseBody extends AsyncIterable<Uint8Array> {
  dump(): Promise<void>;
  destroy(): void;
}

export interface TransportResponse {
  statusCode: number;
  headers: ResponseHeaders;
  body: ResponseBody;
}

/**
 * The HTTP stack under the client: keep-alive connections, its own connect timeout, and the per
 * request headers and body timeouts. It fails with a {@link TransportError} for its own limits and
 * with the system's error (`ECONNREFUSED`, `ECONNRESET`, ...) otherwise.
 */
export interface HttpTransport {
  request(request: TransportRequest): Promise<TransportResponse>;
  /** Closes its connections (a transport given to the client is closed by whoever made it). */
  close(): Promise<void>;
}

/**
 * A transport's own failures, by `code`: `CONNECT_TIMEOUT` (no connection, so nothing was sent),
 * `HEADERS_TIMEOUT`, `BODY_TIMEOUT`, `CUT_OFF` (the connection closed before the body's end).
 */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    readonly code: 'CONNECT_TIMEOUT' | 'HEADERS_TIMEOUT' | 'BODY_TIMEOUT' | 'CUT_OFF',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

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
): Promise<TransportResponse> {
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
  const response = await ctx.transport.request({
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
  body: ResponseBody,
  maxBytes: number,
  operationId: string,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
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
export async function readLimitedText(body: ResponseBody, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
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
