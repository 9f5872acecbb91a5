/**
 * The typed Open Platform client on undici: one keep-alive connection pool per client, one attempt
 * per call (the engine owns retries), every body validated before it is sent and billed, every
 * answer parsed leniently, every failure an {@link OpenPlatformError} that tells the caller whether
 * retrying is safe, and every call's cost reported. The API key never reaches a log line, an error
 * or a logged URL.
 */
import { Agent, type Dispatcher, FormData } from 'undici';
import { z } from 'zod';
import {
  catalogue,
  findOperation,
  isOperationId,
  type OperationEntry,
  type OperationId,
  similarOperationNames,
} from './catalogue';
import {
  billedUnitsOf,
  correlationIdOf,
  describeIssues,
  errorFromAnswer,
  headerValue,
  parseEnvelopeText,
  parseRetryAfter,
  type ResponseHeaders,
} from './envelope';
import { kindFor, OpenPlatformError, type OpenPlatformErrorKind } from './errors';
import { readEventList } from './event-list';
import { loadOperationSchemas } from './operation-schemas';
import type { OperationRow } from './operation-types';
import { fillPath, lookupOperation } from './operations';
import { redactError, redactFields, redactSecret, redactUrl } from './redact';
import { type RequestOf, requestSchemas } from './schemas/requests';
import { type DataOf, responseDataSchemas } from './schemas/responses';
import {
  type AssembledStream,
  deliverText,
  interpretFrame,
  readEventStream,
  StreamAssembler,
} from './stream';
import type {
  CallOptions,
  CallResult,
  CallUsage,
  FetchedDocument,
  OpenPlatformClient,
  OperationCallResult,
  OperationRequest,
  StreamOperationId,
  StreamOptions,
  StreamResult,
} from './types';

/** Where log lines go; every field is redacted before it gets here. */
export interface OpenPlatformLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface OpenPlatformClientOptions {
  /** The platform's base URL. Default: `https://connect.patsnap.com`. */
  baseUrl?: string | undefined;
  /** The default API key; a call's own `apiKey` overrides it. Default: none (each call must give one). */
  apiKey?: string | undefined;
  /**
   * How the key travels: `header` (`Authorization: Bearer <key>`, the default) or `query` (an
   * `apikey=` query parameter, which proxies may log: opt in only where a header is impossible).
   */
  auth?: 'header' | 'query' | undefined;
  /** Keep-alive connections per origin. Default: 16. */
  connections?: number | undefined;
  /** Time to establish a connection. Default: 10 seconds. */
  connectTimeoutMs?: number | undefined;
  /** Time from sending the request to receiving the response headers. Default: 30 seconds. */
  headersTimeoutMs?: number | undefined;
  /** Longest gap between two pieces of the response body. Default: 120 seconds. */
  bodyTimeoutMs?: number | undefined;
  /** Overall limit of one `call` or `fetchDocument`. Default: `bodyTimeoutMs`. */
  timeoutMs?: number | undefined;
  /** A stream fails when no frame arrived for this long. Default: 60 seconds. */
  streamIdleTimeoutMs?: number | undefined;
  /**
   * Overall limit of one `stream` (a stream that keeps sending frames is otherwise never cut).
   * Default: 30 minutes, or `timeoutMs` when that is set.
   */
  streamTimeoutMs?: number | undefined;
  /** Largest document `fetchDocument` accepts. Default: 200 MiB. */
  maxDocumentBytes?: number | undefined;
  /** Largest answer `call` and `stream` read (a JSON body, or a whole event stream). Default: 64 MiB. */
  maxAnswerBytes?: number | undefined;
  /** Called with the cost of every call, successful or not. */
  onUsage?: ((usage: CallUsage) => void) | undefined;
  logger?: OpenPlatformLogger | undefined;
  /** An undici dispatcher to use instead of the client's own pool (the client will not close it). */
  dispatcher?: Dispatcher | undefined;
  /** Default: `opflow/<version>`. */
  userAgent?: string | undefined;
  /** The clock, in epoch milliseconds (durations, `Retry-After` dates). Default: `Date.now`. */
  now?: (() => number) | undefined;
}

const DEFAULT_BASE_URL = 'https://connect.patsnap.com';
const DEFAULT_USER_AGENT = 'opflow/0.1.0';
/** The longest a stream may run by default (the engine's heartbeat guards its job meanwhile). */
const defaultStreamTimeoutMs = 30 * 60_000;

const fn = <T>(what: string) =>
  z.custom<T>((value) => typeof value === 'function', { message: `${what} must be a function` });
const millis = z.number().int().positive().max(2_147_483_647);

const clientOptionsSchema = z.strictObject({
  baseUrl: z.url({ protocol: /^https?$/, error: 'baseUrl must be an http(s) URL' }).default(DEFAULT_BASE_URL),
  apiKey: z.string().trim().min(1, 'apiKey must not be empty').optional(),
  auth: z.enum(['header', 'query']).default('header'),
  connections: z.number().int().positive().max(1024).default(16),
  connectTimeoutMs: millis.default(10_000),
  headersTimeoutMs: millis.default(30_000),
  bodyTimeoutMs: millis.default(120_000),
  timeoutMs: millis.optional(),
  streamIdleTimeoutMs: millis.default(60_000),
  streamTimeoutMs: millis.optional(),
  maxDocumentBytes: z
    .number()
    .int()
    .positive()
    .default(200 * 1024 * 1024),
  maxAnswerBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  onUsage: fn<(usage: CallUsage) => void>('onUsage').optional(),
  logger: z
    .custom<OpenPlatformLogger>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        ['debug', 'info', 'warn', 'error'].every(
          (level) => typeof (value as Record<string, unknown>)[level] === 'function',
        ),
      { message: 'logger must have debug, info, warn and error functions' },
    )
    .optional(),
  dispatcher: z
    .custom<Dispatcher>(
      (value) =>
        typeof value === 'object' && value !== null && typeof (value as Dispatcher).dispatch === 'function',
      { message: 'dispatcher must be an undici Dispatcher' },
    )
    .optional(),
  userAgent: z.string().min(1).default(DEFAULT_USER_AGENT),
  now: fn<() => number>('now').default(() => Date.now),
});

const callOptionsSchema = z
  .object({
    signal: z.instanceof(AbortSignal, { message: 'signal must be an AbortSignal' }).optional(),
    apiKey: z.string().trim().min(1, 'apiKey must not be empty').optional(),
    timeoutMs: millis.optional(),
    onText: fn<(delta: string) => void>('onText').optional(),
  })
  .optional();

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
  'UND_ERR_CONNECT_TIMEOUT',
]);

const MAX_REDIRECTS = 5;
const isRedirect = (status: number) => [301, 302, 303, 307, 308].includes(status);

/** A document link is a plain GET; the platform's keys must never travel with it. */
const documentOperation = 'fetchDocument';

interface Attempt {
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

/**
 * Create a client. Options are validated up front (an invalid option throws an `invalid-request`
 * {@link OpenPlatformError} naming it); see {@link OpenPlatformClientOptions} for the defaults.
 */
export function createOpenPlatformClient(options: OpenPlatformClientOptions = {}): OpenPlatformClient {
  const parsed = clientOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new OpenPlatformError({
      kind: 'invalid-request',
      message: `invalid Open Platform client options: ${describeIssues(parsed.error)}`,
    });
  }
  const settings = parsed.data;
  const now = settings.now;
  const ownAgent =
    settings.dispatcher === undefined
      ? new Agent({
          connections: settings.connections,
          connect: { timeout: settings.connectTimeoutMs },
          headersTimeout: settings.headersTimeoutMs,
          bodyTimeout: settings.bodyTimeoutMs,
        })
      : undefined;
  const dispatcher: Dispatcher = settings.dispatcher ?? (ownAgent as Agent);
  const base = new URL(settings.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const overallTimeoutMs = settings.timeoutMs ?? settings.bodyTimeoutMs;
  let closed = false;

  const secretsOf = (attempt: { apiKey: string | undefined }) => [settings.apiKey, attempt.apiKey];
  const log = (
    level: keyof OpenPlatformLogger,
    message: string,
    fields: Record<string, unknown>,
    secrets: (string | undefined)[],
  ) => {
    if (!settings.logger) return;
    try {
      settings.logger[level](redactSecret(message, secrets), redactFields(fields, secrets));
    } catch {
      // A failing logger must not fail the call.
    }
  };

  const usageOf = (attempt: Attempt, ok: boolean, errorKind?: OpenPlatformErrorKind): CallUsage => ({
    operationId: attempt.operationId,
    durationMs: Math.max(0, now() - attempt.started),
    httpStatus: attempt.httpStatus,
    correlationId: attempt.headers ? correlationIdOf(attempt.headers) : undefined,
    billedUnits: attempt.headers ? billedUnitsOf(attempt.headers) : 0,
    ok,
    errorKind,
  });

  const report = (usage: CallUsage, attempt: Attempt) => {
    if (!settings.onUsage) return;
    try {
      settings.onUsage(usage);
    } catch (error) {
      log(
        'warn',
        'onUsage callback failed',
        { operationId: usage.operationId, error: String(error) },
        secretsOf(attempt),
      );
    }
  };

  /** Turn anything thrown into a redacted OpenPlatformError carrying the call's usage; report it. */
  const fail = (attempt: Attempt, error: unknown): OpenPlatformError => {
    const secrets = secretsOf(attempt);
    const classified = error instanceof OpenPlatformError ? error : classifyFailure(error, attempt);
    const usage = usageOf(attempt, false, classified.kind);
    const final = new OpenPlatformError({
      kind: classified.kind,
      message: redactSecret(classified.message, secrets),
      operationId: classified.operationId ?? attempt.operationId,
      httpStatus: classified.httpStatus ?? attempt.httpStatus,
      code: classified.code,
      correlationId: classified.correlationId ?? usage.correlationId,
      retryAfterMs: classified.retryAfterMs,
      retryable: classified.retryable,
      usage,
      cause: classified.cause === undefined ? undefined : redactError(classified.cause, secrets),
    });
    report(usage, attempt);
    log(
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
  };

  const succeed = (attempt: Attempt, extra: Record<string, unknown> = {}): CallUsage => {
    const usage = usageOf(attempt, true);
    report(usage, attempt);
    log(
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
      secretsOf(attempt),
    );
    return usage;
  };

  /** One signal for the caller's abort and the overall limit; remembers which one fired. */
  const limitSignal = (attempt: Attempt, timeoutMs: number | undefined) => {
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
  };

  const parseCallOptions = (operationId: string, callOptions: unknown) => {
    const parsedOptions = callOptionsSchema.safeParse(callOptions);
    if (!parsedOptions.success) {
      throw new OpenPlatformError({
        kind: 'invalid-request',
        message: `${operationId}: invalid call options: ${describeIssues(parsedOptions.error)}`,
        operationId,
      });
    }
    return parsedOptions.data ?? {};
  };

  const startAttempt = (
    entry: OperationEntry | undefined,
    operationId: string,
    callOptions: { signal?: AbortSignal | undefined; apiKey?: string | undefined },
  ): Attempt => {
    if (closed) {
      throw new OpenPlatformError({ kind: 'invalid-request', message: 'the client is closed', operationId });
    }
    return {
      operationId,
      repeatable: entry ? entry.effect === 'read' : true,
      apiKey: callOptions.apiKey ?? settings.apiKey,
      started: now(),
      timedOut: false,
      callerSignal: callOptions.signal,
    };
  };

  const validateBody = (entry: OperationEntry, body: unknown, attempt: Attempt): Record<string, unknown> => {
    const schema = requestSchemas[entry.operationId as OperationId] as z.ZodType;
    const result = schema.safeParse(body);
    if (!result.success) {
      throw new OpenPlatformError({
        kind: 'invalid-request',
        message: `${entry.operationId} request body is invalid, nothing was sent: ${describeIssues(result.error)}`,
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
    return result.data as Record<string, unknown>;
  };

  /**
   * Send one request to the platform; the caller reads (or dumps) the body. A workflow operation's
   * body is its query (GET) or JSON body (POST); `prepared` carries a catalogue operation's own
   * path, query, headers and body.
   */
  const send = async (
    entry:
      | Pick<OperationEntry, 'operationId' | 'method' | 'path'>
      | Pick<OperationRow, 'operationId' | 'method' | 'path'>,
    body: Record<string, unknown>,
    attempt: Attempt,
    signal: AbortSignal,
    accept: string,
    prepared?: PreparedRequest,
  ): Promise<Dispatcher.ResponseData> => {
    const query = new URLSearchParams();
    if (prepared) appendQuery(query, prepared.query);
    else if (entry.method === 'GET') appendQuery(query, body);
    if (settings.auth === 'query') query.set('apikey', attempt.apiKey as string);
    const search = query.toString();
    const path = `${basePath}${prepared?.path ?? entry.path}${search === '' ? '' : `?${search}`}`;
    const headers: Record<string, string> = {
      ...(prepared?.headers ?? {}),
      accept,
      'user-agent': settings.userAgent,
    };
    if (settings.auth === 'header') headers['authorization'] = `Bearer ${attempt.apiKey}`;
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
    log(
      'debug',
      'open platform call',
      {
        operationId: entry.operationId,
        method: entry.method,
        url: redactUrl(`${base.origin}${path}`),
        auth: settings.auth,
      },
      secretsOf(attempt),
    );
    const response = await dispatcher.request({
      origin: base.origin,
      path,
      method: entry.method,
      headers,
      body: payload,
      signal,
      headersTimeout: settings.headersTimeoutMs,
      bodyTimeout: settings.bodyTimeoutMs,
    });
    attempt.httpStatus = response.statusCode;
    attempt.headers = response.headers;
    return response;
  };

  /** The error for a non-2xx answer, reading its body for an envelope. */
  const errorFromResponse = async (entry: { operationId: string }, response: Dispatcher.ResponseData) => {
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
      retryAfterMs: parseRetryAfter(headerValue(response.headers, 'retry-after'), now()),
    });
  };

  const call = async <Op extends OperationId>(
    operationId: Op,
    body: RequestOf<Op>,
    callOptions?: CallOptions,
  ): Promise<CallResult<Op>> => {
    const entry = isOperationId(operationId) ? (catalogue[operationId] as OperationEntry) : undefined;
    if (!entry) throw unknownOperation(String(operationId));
    const opts = parseCallOptions(entry.operationId, callOptions);
    const attempt = startAttempt(entry, entry.operationId, opts);
    let limit: ReturnType<typeof limitSignal> | undefined;
    try {
      const validBody = validateBody(entry, body, attempt);
      // An event stream cannot be read as one envelope; refuse before it is sent and billed.
      if (entry.stream && validBody['stream'] !== false) {
        throw new OpenPlatformError({
          kind: 'invalid-request',
          message: `${entry.operationId} answers with an event stream: use stream()${
            'stream' in requestSchemas[entry.operationId as OperationId].shape
              ? ', or call() with stream: false'
              : ''
          }; nothing was sent`,
          operationId: entry.operationId,
        });
      }
      limit = limitSignal(attempt, opts.timeoutMs ?? overallTimeoutMs);
      const response = await send(entry, validBody, attempt, limit.signal, 'application/json');
      if (response.statusCode < 200 || response.statusCode > 299) {
        throw await errorFromResponse(entry, response);
      }
      const text = await readAnswerText(response.body, settings.maxAnswerBytes, entry.operationId);
      const data = parseSuccess(entry, text, response, now());
      const usage = succeed(attempt);
      return { data: data as DataOf<Op>, usage };
    } catch (error) {
      throw fail(attempt, error);
    } finally {
      limit?.release();
    }
  };

  const stream = async (
    operationId: StreamOperationId,
    body: RequestOf<StreamOperationId>,
    streamOptions?: StreamOptions,
  ): Promise<StreamResult> => {
    const entry = isOperationId(operationId) ? (catalogue[operationId] as OperationEntry) : undefined;
    if (!entry) throw unknownOperation(String(operationId));
    const opts = parseCallOptions(entry.operationId, streamOptions);
    const attempt = startAttempt(entry, entry.operationId, opts);
    let limit: ReturnType<typeof limitSignal> | undefined;
    try {
      if (!entry.stream) {
        throw new OpenPlatformError({
          kind: 'invalid-request',
          message: `${entry.operationId} is not a streaming operation; use call()`,
          operationId: entry.operationId,
        });
      }
      const validBody = validateBody(entry, body, attempt);
      limit = limitSignal(
        attempt,
        opts.timeoutMs ?? settings.streamTimeoutMs ?? settings.timeoutMs ?? defaultStreamTimeoutMs,
      );
      const response = await send(
        entry,
        validBody,
        attempt,
        limit.signal,
        'text/event-stream, application/json',
      );
      if (response.statusCode < 200 || response.statusCode > 299) {
        throw await errorFromResponse(entry, response);
      }
      const contentType = headerValue(response.headers, 'content-type') ?? '';
      const context = {
        operationId: entry.operationId,
        httpStatus: response.statusCode,
        correlationId: correlationIdOf(response.headers),
        retryableAfterSend: attempt.repeatable,
      };
      let assembled: AssembledStream;
      if (/\bjson\b/i.test(contentType)) {
        const text = await readAnswerText(response.body, settings.maxAnswerBytes, entry.operationId);
        assembled = assemblePlainAnswer(entry, text, response, opts.onText, now());
      } else {
        assembled = await readEventStream(response.body, {
          context,
          onText: opts.onText,
          idleTimeoutMs: settings.streamIdleTimeoutMs,
          maxBytes: settings.maxAnswerBytes,
          abort: () => response.body.destroy(),
        });
      }
      const usage = succeed(attempt, {
        events: assembled.events,
        finishReason: assembled.finishReason,
        tokens: assembled.tokens.total,
      });
      return { ...assembled, usage };
    } catch (error) {
      throw fail(attempt, error);
    } finally {
      limit?.release();
    }
  };

  const fetchDocument = async (url: string, callOptions?: CallOptions): Promise<FetchedDocument> => {
    const opts = parseCallOptions(documentOperation, callOptions);
    // Only the link's own credentials (if any) travel; the platform key is never added.
    const attempt: Attempt = { ...startAttempt(undefined, documentOperation, opts), apiKey: opts.apiKey };
    const shown = redactUrl(url);
    let limit: ReturnType<typeof limitSignal> | undefined;
    try {
      const target = z.url({ protocol: /^https?$/ }).safeParse(url);
      if (!target.success) {
        throw new OpenPlatformError({
          kind: 'invalid-request',
          message: `fetchDocument needs an http(s) URL, got "${redactUrl(String(url)).slice(0, 200)}"`,
          operationId: documentOperation,
        });
      }
      let current = new URL(target.data);
      limit = limitSignal(attempt, opts.timeoutMs ?? overallTimeoutMs);
      log('debug', 'fetching document', { url: shown }, secretsOf(attempt));
      let response = await getDocument(current, limit.signal);
      // Links may redirect to storage; followed by hand so the file name comes from the last URL.
      for (let hops = 0; isRedirect(response.statusCode) && hops < MAX_REDIRECTS; hops++) {
        const location = headerValue(response.headers, 'location');
        if (location === undefined) break;
        await response.body.dump().catch(() => undefined);
        current = new URL(location, current);
        if (current.protocol !== 'http:' && current.protocol !== 'https:') break;
        log('debug', 'following document redirect', { url: redactUrl(current.href) }, secretsOf(attempt));
        response = await getDocument(current, limit.signal);
      }
      attempt.httpStatus = response.statusCode;
      attempt.headers = response.headers;
      if (response.statusCode < 200 || response.statusCode > 299) {
        await response.body.dump().catch(() => undefined);
        const gone = [403, 404, 410].includes(response.statusCode);
        const kind = gone ? 'not-found' : kindFor(response.statusCode, undefined);
        throw new OpenPlatformError({
          kind,
          message: gone
            ? `the document link has expired or does not exist (HTTP ${response.statusCode}): ${shown}`
            : `fetching the document failed (HTTP ${response.statusCode}): ${shown}`,
          operationId: documentOperation,
          httpStatus: response.statusCode,
          correlationId: correlationIdOf(response.headers),
          retryAfterMs: parseRetryAfter(headerValue(response.headers, 'retry-after'), now()),
        });
      }
      const bytes = await readLimitedBytes(response.body, settings.maxDocumentBytes);
      const contentType = headerValue(response.headers, 'content-type') ?? 'application/octet-stream';
      const fileName =
        fileNameFromDisposition(headerValue(response.headers, 'content-disposition')) ??
        fileNameFromPath(current);
      const usage = succeed(attempt, { url: shown, bytes: bytes.byteLength });
      return { body: bytes, contentType, fileName, usage };
    } catch (error) {
      throw fail(attempt, error);
    } finally {
      limit?.release();
    }
  };

  const getDocument = (url: URL, signal: AbortSignal) =>
    dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { 'user-agent': settings.userAgent, accept: '*/*' },
      signal,
      headersTimeout: settings.headersTimeoutMs,
      bodyTimeout: settings.bodyTimeoutMs,
    });

  /** Check a catalogue operation's parameters and body, and build what is sent. Throws invalid-request. */
  const prepare = async (row: OperationRow, input: OperationRequest): Promise<PreparedRequest> => {
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
        `invalid parameters: ${describeIssues(parameters.error)}${
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
      if (!parsedBody.success)
        throw invalid(`the request body is invalid: ${describeIssues(parsedBody.error)}`);
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
      throw invalid((error as Error).message.replace(`${row.operationId}: `, ''));
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
  };

  const request = async (
    idOrRef: string,
    input: OperationRequest = {},
    callOptions?: StreamOptions,
  ): Promise<OperationCallResult> => {
    const found = lookupOperation(String(idOrRef));
    if (!found.ok) throw new OpenPlatformError({ kind: 'invalid-request', message: found.message });
    const row = found.operation;
    const opts = parseCallOptions(row.operationId, callOptions);
    const attempt: Attempt = {
      operationId: row.operationId,
      repeatable: row.effect === 'read',
      apiKey: opts.apiKey ?? settings.apiKey,
      started: now(),
      timedOut: false,
      callerSignal: opts.signal,
    };
    if (closed) {
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
      limit = limitSignal(attempt, opts.timeoutMs ?? (row.stream ? settings.timeoutMs : overallTimeoutMs));
      const accept = row.stream ? 'text/event-stream, application/json' : 'application/json';
      const response = await send(row, {}, attempt, limit.signal, accept, prepared);
      if (response.statusCode < 200 || response.statusCode > 299) {
        throw await errorFromResponse(row, response);
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
            idleTimeoutMs: settings.streamIdleTimeoutMs,
            maxBytes: settings.maxAnswerBytes,
            abort: () => response.body.destroy(),
          });
        } else {
          const frames = await readEventList(response.body, context, settings.maxAnswerBytes);
          data = frames.map((frame, index) =>
            checkData(row, schemas.data, frame, response, `event ${index + 1}`),
          );
        }
      } else {
        const text = await readAnswerText(response.body, settings.maxAnswerBytes, row.operationId);
        data = answerData(row, schemas.data, text, response, now());
      }
      const usage = succeed(attempt);
      return { operation: row, data, usage };
    } catch (error) {
      throw fail(attempt, error);
    } finally {
      limit?.release();
    }
  };

  const callByName = async (idOrRef: string, body: unknown, callOptions?: CallOptions) => {
    const entry = typeof idOrRef === 'string' ? findOperation(idOrRef.trim()) : undefined;
    if (!entry) throw unknownOperation(String(idOrRef));
    return call(entry.operationId as OperationId, body as never, callOptions) as Promise<
      CallResult<OperationId>
    >;
  };

  const close = async () => {
    if (closed) return;
    closed = true;
    await ownAgent?.close();
  };

  return { call, callByName, request, stream, fetchDocument, close };
}

/** What `request` sends for a catalogue operation. */
interface PreparedRequest {
  path: string;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body: unknown;
}

const chatStreams = new Set([
  'ai07ChatCcGptStream',
  'ai50ChatPatGptStream',
  'ai20ChatPharmGptStream',
  'ai68-2ChatAiLsStream',
]);
const isChatStream = (operationId: string) => chatStreams.has(operationId);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A catalogue operation's answer data, by its answer form, checked against its schema. */
function answerData(
  row: OperationRow,
  schema: z.ZodType,
  text: string,
  response: Dispatcher.ResponseData,
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
  response: Dispatcher.ResponseData,
  what: string,
): unknown {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw protocolError(
    row.operationId,
    response.statusCode,
    correlationIdOf(response.headers),
    `${what} does not have the expected shape: ${describeIssues(parsed.error)}`,
  );
}

/**
 * The envelope of an answer, if it reports success; otherwise the error it stands for (with the
 * upstream's Retry-After), or a protocol error when it is no envelope at all.
 */
function successEnvelope(
  entry: { operationId: string },
  text: string,
  response: Dispatcher.ResponseData,
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
function parseSuccess(
  entry: OperationEntry,
  text: string,
  response: Dispatcher.ResponseData,
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
      `the answer's data does not have the expected shape: ${describeIssues(data.error)}`,
    );
  }
  return data.data;
}

/** A complete JSON answer from a streaming operation (the server chose not to stream). */
function assemblePlainAnswer(
  entry: OperationEntry,
  text: string,
  response: Dispatcher.ResponseData,
  onText: ((delta: string) => void) | undefined,
  nowMs: number,
): AssembledStream {
  const correlationId = correlationIdOf(response.headers);
  successEnvelope(entry, text, response, nowMs);
  const reading = interpretFrame(JSON.parse(text));
  if (reading.kind !== 'frame') {
    const problem = reading.kind === 'problem' ? reading.problem : 'an error envelope';
    throw protocolError(entry.operationId, response.statusCode, correlationId, problem);
  }
  const assembler = new StreamAssembler();
  const added = assembler.add(reading.frame);
  if ('problem' in added)
    throw protocolError(entry.operationId, response.statusCode, correlationId, added.problem);
  deliverText(onText, added.delta, entry.operationId);
  const result = assembler.result();
  // A whole answer is finished by nature, even without a status.
  return { ...result, finishReason: reading.frame.finishReason ?? 'finished' };
}

function protocolError(
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
function classifyFailure(error: unknown, attempt: Attempt): OpenPlatformError {
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
  if (codes.includes('UND_ERR_CONNECT_TIMEOUT')) {
    return new OpenPlatformError({
      ...base,
      kind: 'timeout',
      retryable: true,
      message: `${attempt.operationId}: connecting timed out (nothing was sent)`,
    });
  }
  if (codes.includes('UND_ERR_HEADERS_TIMEOUT') || codes.includes('UND_ERR_BODY_TIMEOUT')) {
    const which = codes.includes('UND_ERR_HEADERS_TIMEOUT') ? 'waiting for the answer' : 'reading the answer';
    return new OpenPlatformError({
      ...base,
      kind: 'timeout',
      retryable,
      message: `${attempt.operationId} timed out ${which}${retryable ? '' : ' (the request may have been processed)'}`,
    });
  }
  // Closed after the headers arrived: the answer was cut off. (A FIN and a reset look the same to
  // undici at this point; either way the request was processed, so only reads may be repeated.)
  const cutOff = attempt.httpStatus !== undefined && codes.includes('UND_ERR_SOCKET');
  if (cutOff || codes.includes('UND_ERR_RES_CONTENT_LENGTH_MISMATCH')) {
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

function unknownOperation(name: string): OpenPlatformError {
  const matches = similarOperationNames(name);
  return new OpenPlatformError({
    kind: 'invalid-request',
    message: `unknown operation "${name.slice(0, 100)}"${matches.length ? `; did you mean ${matches.join(', ')}?` : ''}`,
  });
}

/** GET parameters: scalars as text, arrays repeated, objects as JSON. */
function appendQuery(query: URLSearchParams, body: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) {
      query.append(name, typeof item === 'object' && item !== null ? JSON.stringify(item) : String(item));
    }
  }
}

async function readLimitedBytes(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
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
async function readAnswerText(
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
async function readLimitedText(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string> {
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

function describeBody(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return 'the answer had no body';
  const clipped = trimmed.replace(/\s+/g, ' ').slice(0, 120);
  return `the answer is not an envelope (body starts "${clipped}")`;
}

/** `attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf` or `filename="report.docx"`. */
export function fileNameFromDisposition(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(header);
  if (extended?.[2]) {
    try {
      return sanitizeFileName(decodeURIComponent(extended[2].trim().replace(/^"|"$/g, '')));
    } catch {
      // fall through to the plain form
    }
  }
  const plain = /filename\s*=\s*("((?:[^"\\]|\\.)*)"|[^;]+)/i.exec(header);
  const value = plain?.[2] ?? plain?.[1];
  return value ? sanitizeFileName(value.replace(/\\(.)/g, '$1').trim()) : undefined;
}

function fileNameFromPath(url: URL): string {
  const last = url.pathname.split('/').filter(Boolean).pop();
  if (!last) return 'download';
  try {
    return sanitizeFileName(decodeURIComponent(last)) ?? 'download';
  } catch {
    return sanitizeFileName(last) ?? 'download';
  }
}

/** No directories, no control characters: the name is used to store the file. */
function sanitizeFileName(name: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we remove
  const cleaned = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? undefined : cleaned;
}
