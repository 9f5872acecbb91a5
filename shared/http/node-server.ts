/**
 * The job API on a node:http server, for `opflow serve`: the same routes and JSON as the Lambda
 * `api` (shared/http/job-api.ts does the work), plus what a server exposed on a machine needs
 * around it: a body size limit enforced while reading, an optional bearer token compared in
 * constant time, refusal of cross-site browser requests and of DNS-rebound Host names, the report
 * files themselves at `GET /jobs/{id}/report/{file}`, and a graceful close.
 *
 * Nothing here logs or answers a header value, a query string or a body: only method, path, status.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JobDeps } from '../engine/deps';
import { isTerminal } from '../engine/job-record';
import type { WorkflowRegistry } from '../engine/workflow';
import { namedErrorMessage } from '../errors/error-message';
import { ApiError, refusal, refusalAnswer } from './api-error';
import { bodyTooLarge, defaultMaxBodyBytes } from './body-limit';
import { type ApiRoute, handleJobApiRequest, type JobApiResponse } from './job-api';
import { pathPattern, routeOf } from './routes';

export interface JobApiServerOptions {
  /** The engine the API submits to and reads from. */
  deps: JobDeps;
  /** The interface to listen on. Default: 127.0.0.1 (this machine only). */
  host?: string | undefined;
  /** The port; 0 picks a free one. Default: 0. */
  port?: number | undefined;
  /**
   * When set, every request must carry `Authorization: Bearer <token>`. Default: none, allowed only
   * on loopback (where requests naming another Host are refused); any other host needs a token.
   */
  token?: string | undefined;
  /** Largest request body accepted; a larger one is answered 413. Default: 1 MiB. */
  maxBodyBytes?: number | undefined;
  /** Serve report files at `GET /jobs/{id}/report/{file}`. Default: true. */
  serveReportFiles?: boolean | undefined;
  /** How long `close()` lets requests in progress finish before dropping them. Default: 10 seconds. */
  closeGraceMs?: number | undefined;
  /** Told about every answered request (for a request log). Default: nothing is logged. */
  onRequest?: ((entry: RequestLogEntry) => void) | undefined;
  /**
   * Other handlers on the same origin (the MCP endpoint, the dashboard's files), tried in order
   * before the job API's routes. They pass the same Host and Origin checks; the bearer token too
   * unless `public` (static files with no data, so a browser can load the page that asks for it).
   */
  mounts?: readonly ServerMount[] | undefined;
  /** More routes of the job API (timeline, batches, schedules, webhook deliveries): see job-api.ts. */
  routes?: readonly ApiRoute[] | undefined;
}

/** A handler mounted beside the job API (see `JobApiServerOptions.mounts`). */
export interface ServerMount {
  matches(path: string, method: string): boolean;
  /** No bearer token needed (Host and Origin rules still apply). Default: false. */
  public?: boolean | undefined;
  /** Writes the whole response; may throw before writing to have the error answered as JSON. */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    context: { path: string; method: string; readBody(): Promise<string> },
  ): Promise<void>;
}

/** One answered request, safe to log: no query string, header or body. */
export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

export interface JobApiServer {
  /** Base URL, e.g. `http://127.0.0.1:8788` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /**
   * Stops accepting connections, lets requests in progress finish (up to the grace period), then
   * drops what is left. Resolves once the server is closed; calling it again returns the same promise.
   */
  close(): Promise<void>;
}

const jobIdPattern = /^[0-9A-Za-z_-]{1,64}$/;
const reportFileRoute = pathPattern(routeOf('getReportFile'));

/** Starts listening; rejects when the address cannot be used (in use, not on this machine). */
export async function startJobApiServer(options: JobApiServerOptions): Promise<JobApiServer> {
  const settings = serverSettings(options);
  const state: ServerState = { stopping: false, inFlight: new Set() };
  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    const handled = answerRequest(req, res, options, settings, state)
      .catch(() => {
        // The response could not be written (the client went away): nothing to tell it.
        if (!res.headersSent) res.destroy();
      })
      .finally(() => state.inFlight.delete(handled));
    state.inFlight.add(handled);
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  const { url, port } = await listen(server, options.port ?? 0, settings.host);
  return { url, port, close: closeOnce(server, state, options.closeGraceMs ?? 10_000) };
}

/** The options with their defaults, checked: a server beyond loopback needs a token. */
interface ServerSettings {
  host: string;
  maxBodyBytes: number;
  tokenDigest: Buffer | undefined;
  /** Listening on loopback only, so requests naming another Host are refused. */
  loopbackOnly: boolean;
}

/** What a running server and its close share: closing, and the requests in progress. */
interface ServerState {
  stopping: boolean;
  inFlight: Set<Promise<void>>;
}

function serverSettings(options: JobApiServerOptions): ServerSettings {
  const host = options.host ?? '127.0.0.1';
  const loopbackOnly = isLoopbackHost(host);
  if (!loopbackOnly && options.token === undefined) {
    // Without a token and without the Host check, DNS rebinding would let any web page in.
    throw new Error(`listening on ${host} (beyond loopback) needs a token`);
  }
  return {
    host,
    maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes,
    tokenDigest: options.token === undefined ? undefined : sha256(options.token),
    loopbackOnly,
  };
}

/** A request's method and path, the path as it may be logged, and its query. */
interface RequestTarget {
  method: string;
  path: string;
  shownPath: string;
  searchParams: URLSearchParams;
}

function requestTarget(req: IncomingMessage): RequestTarget {
  const method = (req.method ?? 'GET').toUpperCase();
  // Split by hand: `new URL` would read a path starting with `//` as a host name.
  const target = req.url ?? '/';
  const queryAt = target.indexOf('?');
  const path = queryAt < 0 ? target : target.slice(0, queryAt);
  // A confirmation page's path holds its signed token: never logged.
  const shownPath = path.replace(/^\/review\/[^/]+/, '/review/…');
  const searchParams = new URLSearchParams(queryAt < 0 ? '' : target.slice(queryAt + 1));
  return { method, path, shownPath, searchParams };
}

type ServerAnswer = JobApiResponse | { status: number; headers: Record<string, string>; body: Uint8Array };

/**
 * One request: a mount that matches writes its own answer; anything else passes the caller checks
 * and is a report file or a job API route. A failure is answered as JSON (500 without detail when
 * it is not an ApiError), and every answer is told to `onRequest`.
 */
async function answerRequest(
  req: IncomingMessage,
  res: ServerResponse,
  options: JobApiServerOptions,
  settings: ServerSettings,
  state: ServerState,
): Promise<void> {
  const startedAt = performance.now();
  const target = requestTarget(req);
  const told = (status: number) =>
    options.onRequest?.({
      method: target.method,
      path: target.shownPath,
      status,
      durationMs: Math.round(performance.now() - startedAt),
    });
  let response: ServerAnswer;
  try {
    if (state.stopping) throw new ApiError(503, 'stopping', 'the server is stopping; try again later');
    const mount = options.mounts?.find((candidate) => candidate.matches(target.path, target.method));
    if (mount) {
      await answerByMount(req, res, mount, target, settings);
      told(res.statusCode);
      return;
    }
    checkCaller(req, settings);
    response = await jobApiAnswer(req, target, options, settings.maxBodyBytes);
  } catch (error) {
    response = failureAnswer(error, options.deps, target);
  }
  // A mount failed after it began its answer: nothing more can be said on this response.
  if (res.headersSent) {
    res.end();
    return;
  }
  writeAnswer(req, res, response, target.method, state.stopping);
  told(response.status);
}

/** A mount's own answer, once the caller passed the checks that mount asks for. */
async function answerByMount(
  req: IncomingMessage,
  res: ServerResponse,
  mount: ServerMount,
  target: RequestTarget,
  settings: ServerSettings,
): Promise<void> {
  // A public mount carries its own credential (a signed link, a webhook's signature, a feed
  // token) or none, so another origin gains nothing: a review page's form, sent under its
  // `Referrer-Policy: no-referrer`, comes with `Origin: null` and must be taken.
  checkCaller(req, {
    tokenDigest: mount.public ? undefined : settings.tokenDigest,
    loopbackOnly: settings.loopbackOnly,
    checkOrigin: !mount.public,
  });
  const { path, method } = target;
  await mount.handle(req, res, {
    path,
    method,
    readBody: () => readBody(req, settings.maxBodyBytes, target),
  });
  if (!res.writableEnded) await new Promise((resolve) => res.once('finish', resolve));
}

/** A report file, or the job API's answer to the request read whole (with report file links). */
async function jobApiAnswer(
  req: IncomingMessage,
  target: RequestTarget,
  options: JobApiServerOptions,
  maxBodyBytes: number,
): Promise<ServerAnswer> {
  const { method, path, searchParams } = target;
  const servesReportFiles = options.serveReportFiles !== false;
  const fileMatch = servesReportFiles ? reportFileRoute.exec(path) : null;
  if (fileMatch) return reportFile(options.deps, method, fileMatch[1]!, fileMatch[2]!);
  const body = await readBody(req, maxBodyBytes, target, options.deps.workflows);
  const query: Record<string, string> = {};
  // Repeated parameters are joined with commas, as API Gateway does.
  for (const name of new Set(searchParams.keys())) query[name] = searchParams.getAll(name).join(',');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const response = await handleJobApiRequest(
    { method, path, query, headers, body },
    {
      deps: options.deps,
      maxBodyBytes,
      requireJsonContentType: true,
      servesReportFiles,
      routes: options.routes,
    },
  );
  return servesReportFiles ? withReportHrefs(path, method, response) : response;
}

/** An ApiError as its own answer; anything else logged (without the query) and answered 500. */
function failureAnswer(error: unknown, deps: JobDeps, target: RequestTarget): ServerAnswer {
  if (error instanceof ApiError) return refusalAnswer(error);
  deps.log?.error('job API server: request failed', {
    method: target.method,
    path: target.shownPath,
    error: namedErrorMessage(error),
  });
  return refusal(500, 'internal', 'the request failed; try again later');
}

function writeAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  response: ServerAnswer,
  method: string,
  stopping: boolean,
): void {
  const headers: Record<string, string> = { ...response.headers };
  // An unread body (refused early) or a closing server: do not offer the connection for reuse.
  if (stopping || !req.complete) headers.connection = 'close';
  res.writeHead(response.status, headers);
  const body = 'base64' in response && response.base64 ? Buffer.from(response.body, 'base64') : response.body;
  res.end(method === 'HEAD' ? undefined : body);
  if (!req.complete) req.resume();
}

/** Listens on the host and port; the base URL names a wildcard address by its loopback one. */
async function listen(server: Server, port: number, host: string): Promise<{ url: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return { url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${bound}`, port: bound };
}

/** `close()`: stop accepting, let requests in progress finish within the grace, drop the rest. */
function closeOnce(server: Server, state: ServerState, graceMs: number): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      state.stopping = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        timer.unref();
      });
      await Promise.race([Promise.allSettled([...state.inFlight]), grace]);
      server.closeAllConnections();
      await closed;
    })();
    return closing;
  };
}

/**
 * Refuses a caller without the token, a DNS-rebound Host on a loopback server, a cross-site browser
 * (unless `checkOrigin` is false: a public mount).
 */
function checkCaller(
  req: IncomingMessage,
  settings: { tokenDigest: Buffer | undefined; loopbackOnly: boolean; checkOrigin?: boolean },
): void {
  const hostHeader = req.headers.host ?? '';
  if (settings.loopbackOnly && !isLoopbackHost(hostnameOf(hostHeader))) {
    // A page whose domain an attacker re-points at 127.0.0.1 still sends its own name as Host.
    throw new ApiError(
      421,
      'misdirected-request',
      'this server listens on loopback and answers only requests addressed to localhost, 127.0.0.1 or [::1]',
    );
  }
  const origin = req.headers.origin;
  // `Origin: null` is what a sandboxed iframe, a data: URL or a file: page sends: never this server's own pages.
  if (
    settings.checkOrigin !== false &&
    origin !== undefined &&
    (origin === 'null' || hostOfOrigin(origin) !== hostHeader.toLowerCase())
  ) {
    throw new ApiError(
      403,
      'cross-origin',
      'requests from web pages of another origin are refused (this API sends no CORS headers)',
    );
  }
  if (settings.tokenDigest === undefined) return;
  const authorization = req.headers.authorization;
  const given = authorization === undefined ? undefined : /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)?.[1];
  if (given === undefined) {
    throw new ApiError(
      401,
      'unauthorized',
      'this server needs the header Authorization: Bearer <token> (the token is OPFLOW_SERVE_TOKEN)',
      { 'www-authenticate': 'Bearer realm="opflow"' },
    );
  }
  // Digests have one length whatever the token's, so the comparison takes the same time.
  if (!timingSafeEqual(sha256(given), settings.tokenDigest)) {
    throw new ApiError(401, 'unauthorized', 'the bearer token is not this server’s', {
      'www-authenticate': 'Bearer realm="opflow", error="invalid_token"',
    });
  }
}

/** Reads the body as UTF-8, refusing more than `maxBytes` as soon as it is known (bodyTooLarge). */
async function readBody(
  req: IncomingMessage,
  maxBytes: number,
  target: RequestTarget,
  workflows?: WorkflowRegistry,
): Promise<string> {
  const tooLarge = () => bodyTooLarge(maxBytes, target, workflows);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  // Events, not `for await`: leaving that loop early would destroy the socket before the 413 is sent.
  const bytes = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        req.off('data', onData);
        req.off('end', onEnd);
        reject(tooLarge());
      } else chunks.push(chunk);
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
  });
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError(400, 'invalid-body', 'the request body is not UTF-8 text');
  }
}

/**
 * `GET /jobs/{id}/report/{file}`: a file of a succeeded job's report (report.html, report.md,
 * result.json, or an attachment, by its name or as `attachments/<name>`). Only keys the job lists
 * among its outputs are served, and the report store refuses malformed keys, so no path escapes.
 */
async function reportFile(
  deps: JobDeps,
  method: string,
  rawId: string,
  rawFile: string,
): Promise<{ status: number; headers: Record<string, string>; body: Uint8Array }> {
  if (method !== 'GET' && method !== 'HEAD') {
    throw new ApiError(405, 'method-not-allowed', `${method} is not supported on a report file; use GET`, {
      allow: 'GET, HEAD',
    });
  }
  const decode = (part: string, where: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw new ApiError(
        400,
        'invalid-request',
        `${where}: ${JSON.stringify(part)} is not valid URL encoding`,
      );
    }
  };
  const id = decode(rawId, 'path.id');
  if (!jobIdPattern.test(id)) throw new ApiError(400, 'invalid-request', 'path.id: is not a job id');
  const name = rawFile
    .split('/')
    .map((part) => decode(part, 'path.file'))
    .join('/');
  const job = await deps.store.get(id);
  if (!job) throw new ApiError(404, 'not-found', `no job ${id}`);
  if (job.status !== 'SUCCEEDED') {
    const why = isTerminal(job.status) ? `it ended ${job.status}` : `it is ${job.status}`;
    throw new ApiError(409, 'no-report', `job ${job.id} has no report: ${why}`);
  }
  const prefix = `reports/${job.id}/`;
  const key = [`${prefix}${name}`, `${prefix}attachments/${name}`].find(
    (candidate) => job.outputs.includes(candidate) && !candidate.startsWith(`${prefix}steps/`),
  );
  if (key === undefined) throw new ApiError(404, 'not-found', `job ${job.id} has no report file ${name}`);
  const stored = await deps.reports.get(key);
  if (!stored) throw new ApiError(404, 'not-found', `the report file ${name} of job ${job.id} is missing`);
  const fileName = key.slice(key.lastIndexOf('/') + 1);
  const isAttachment = key.startsWith(`${prefix}attachments/`);
  const headers: Record<string, string> = {
    'content-type': stored.contentType,
    'content-length': String(stored.body.byteLength),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    // Reports are read in place; attachments (upstream documents) are saved, never rendered here.
    'content-disposition': `${isAttachment ? 'attachment' : 'inline'}; filename*=UTF-8''${encodeURIComponent(fileName)}`,
    // The report's HTML carries its own inline style and nothing else: no script may run.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
  };
  return { status: 200, headers, body: stored.body };
}

/** Adds to each file of a `GET /jobs/{id}/report` answer the path this server serves it at. */
function withReportHrefs(path: string, method: string, response: JobApiResponse): JobApiResponse {
  const match = /^\/jobs\/([^/]+)\/report\/?$/.exec(path);
  if (!match || method !== 'GET' || response.status !== 200) return response;
  const answer = JSON.parse(response.body) as { jobId: string; files: { name: string; href?: string }[] };
  for (const file of answer.files) {
    file.href = `/jobs/${encodeURIComponent(answer.jobId)}/report/${file.name
      .split('/')
      .map(encodeURIComponent)
      .join('/')}`;
  }
  return { ...response, body: JSON.stringify(answer) };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** True for names and addresses that reach only this machine. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return (
    name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name)
  );
}

/** `example.com:8080` → `example.com`, `[::1]:8080` → `::1`. */
function hostnameOf(hostHeader: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hostHeader);
  if (bracketed) return bracketed[1]!;
  return hostHeader.replace(/:\d+$/, '');
}

function hostOfOrigin(origin: string): string | undefined {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return undefined;
  }
}
