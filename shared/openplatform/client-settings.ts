/**
 * The client's options, their defaults and checks, and the context every part of the client shares
 * (settings, transport, base URL, redacting log).
 */
import * as z from 'zod';
import { formatIssues } from '../errors/zod-issues';
import type { Logger, LogLevel } from '../log/logger';
import type { HttpTransport } from './client-transport';
import { OpenPlatformError } from './errors';
import { redactFields, redactSecret } from './redact';
import type { CallUsage } from './types';

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
  /** Where log lines go; every message and field is redacted before it gets there. */
  logger?: Logger | undefined;
  /**
   * The HTTP stack to use instead of the client's own (Node's http/https with `connections`
   * keep-alive connections and `connectTimeoutMs`; client-node-http.ts). The client does not close it.
   */
  transport?: HttpTransport | undefined;
  /** Default: `opflow/<version>`. */
  userAgent?: string | undefined;
  /** The clock, in epoch milliseconds (durations, `Retry-After` dates). Default: `Date.now`. */
  now?: (() => number) | undefined;
}

const DEFAULT_BASE_URL = 'https://connect.patsnap.com';
const DEFAULT_USER_AGENT = 'opflow/0.1.0';
/** The longest a stream may run by default (the engine's heartbeat guards its job meanwhile). */
export const defaultStreamTimeoutMs = 30 * 60_000;

const fn = <T>(what: string) =>
  z.custom<T>((value) => typeof value === 'function', { message: `${what} must be a function` });
const millis = z.number().int().positive().max(2_147_483_647);

export const clientOptionsSchema = z.strictObject({
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
    .custom<Logger>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        ['debug', 'info', 'warn', 'error'].every(
          (level) => typeof (value as Record<string, unknown>)[level] === 'function',
        ),
      { message: 'logger must have debug, info, warn and error functions' },
    )
    .optional(),
  transport: z
    .custom<HttpTransport>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as HttpTransport).request === 'function' &&
        typeof (value as HttpTransport).close === 'function',
      { message: 'transport must have request and close functions' },
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
/** The client's settings, defaults filled in. */
export type ClientSettings = z.output<typeof clientOptionsSchema>;

/** What every part of one client shares. */
export interface ClientContext {
  settings: ClientSettings;
  transport: HttpTransport;
  base: URL;
  /** The base URL's path without a trailing slash, put before every operation's path. */
  basePath: string;
  /** The overall limit of one `call` or `fetchDocument`. */
  overallTimeoutMs: number;
  isClosed(): boolean;
  /** The keys one attempt must never show: the client's and the call's own. */
  secretsOf(attempt: { apiKey: string | undefined }): (string | undefined)[];
  /** Log through the configured logger, message and fields redacted; a failing logger is ignored. */
  log(
    level: LogLevel,
    message: string,
    fields: Record<string, unknown>,
    secrets: (string | undefined)[],
  ): void;
}

/** The context of a client with these settings. */
export function clientContext(
  settings: ClientSettings,
  transport: HttpTransport,
  isClosed: () => boolean,
): ClientContext {
  const base = new URL(settings.baseUrl);
  return {
    settings,
    transport,
    base,
    basePath: base.pathname.replace(/\/+$/, ''),
    overallTimeoutMs: settings.timeoutMs ?? settings.bodyTimeoutMs,
    isClosed,
    secretsOf: (attempt) => [settings.apiKey, attempt.apiKey],
    log: (level, message, fields, secrets) => {
      if (!settings.logger) return;
      try {
        settings.logger[level](redactSecret(message, secrets), redactFields(fields, secrets));
      } catch {
        // A failing logger must not fail the call.
      }
    },
  };
}

/** A call's options, checked (an invalid one is an `invalid-request` error naming it). */
export function parseCallOptions(operationId: string, callOptions: unknown) {
  const parsedOptions = callOptionsSchema.safeParse(callOptions);
  if (!parsedOptions.success) {
    throw new OpenPlatformError({
      kind: 'invalid-request',
      message: `${operationId}: invalid call options: ${formatIssues(parsedOptions.error)}`,
      operationId,
    });
  }
  return parsedOptions.data ?? {};
}
