/**
 * The client's default transport on Node's own `http`/`https`: a keep-alive pool of at most
 * `connections` connections per origin, a connect timeout of its own (connecting includes the
 * address lookup and, for https, the TLS handshake), and each request's headers and body timeouts.
 * Nothing of it is bundled (undici, which the client used before, was 525 KiB of every Lambda
 * bundle that held the client); the same transport serves the CLI and the step worker.
 *
 * Failures: its own limits are {@link TransportError}s (`CONNECT_TIMEOUT` means nothing was sent);
 * a connection that ends before the answer's end is `CUT_OFF`; anything else is the system's error
 * (`ECONNREFUSED`, `ENOTFOUND`, `ECONNRESET`, ...) or the signal's reason, as it came.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { errorMessage } from '../errors/error-message';
import {
  type HttpTransport,
  type ResponseBody,
  TransportError,
  type TransportRequest,
  type TransportResponse,
} from './client-transport';

export interface NodeHttpTransportOptions {
  /** Keep-alive connections per origin. */
  connections: number;
  /** Time to establish a connection (lookup, TCP, TLS). */
  connectTimeoutMs: number;
  /** The address lookup (default: the system's, `dns.lookup`). */
  lookup?: LookupFunction | undefined;
}

/**
 * An idle pooled connection is closed after this long, and a second before the server's own
 * `Keep-Alive: timeout=N` when it announces a shorter one (Node's agent reads that hint only when
 * it has a timeout of its own). A server closes an idle connection on its own clock; a request
 * written to it as it closes fails with a reset, which for a create cannot be told from one the
 * server took, so the job fails rather than pay twice. Retiring idle connections before the
 * common server idle limits (Node's 5 s, most proxies' 60 s) keeps that race rare.
 */
export const idleConnectionMs = 4_000;

export function nodeHttpTransport(options: NodeHttpTransportOptions): HttpTransport {
  const agentOptions = { keepAlive: true, maxSockets: options.connections, timeout: idleConnectionMs };
  const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  return {
    request: (request) => send(request, agents, options),
    async close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

const asError = (reason: unknown) =>
  reason instanceof Error ? reason : new Error(`aborted: ${String(reason ?? 'no reason given')}`);

const later = (ms: number, action: () => void) => {
  const timer = setTimeout(action, ms);
  timer.unref();
  return timer;
};

async function send(
  request: TransportRequest,
  agents: { http: http.Agent; https: https.Agent },
  options: NodeHttpTransportOptions,
): Promise<TransportResponse> {
  const origin = new URL(request.origin);
  const secure = origin.protocol === 'https:';
  const headers = { ...request.headers };
  let payload: string | Uint8Array | undefined;
  if (request.body instanceof FormData) {
    // Node's own Response writes the multipart body and its boundary.
    const encoded = new Response(request.body);
    headers['content-type'] = encoded.headers.get('content-type') as string;
    payload = new Uint8Array(await encoded.arrayBuffer());
  } else payload = request.body;
  if (payload !== undefined) {
    headers['content-length'] = String(
      typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength,
    );
  }
  const { signal } = request;
  if (signal.aborted) throw asError(signal.reason);

  return new Promise<TransportResponse>((resolve, reject) => {
    const outgoing = (secure ? https : http).request({
      protocol: origin.protocol,
      hostname: origin.hostname.replace(/^\[|\]$/g, ''),
      port: origin.port === '' ? undefined : Number(origin.port),
      path: request.path,
      method: request.method,
      headers,
      agent: secure ? agents.https : agents.http,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    });
    let response: IncomingMessage | undefined;
    let connectTimer: NodeJS.Timeout | undefined;
    let headersTimer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      const reason = asError(signal.reason);
      outgoing.destroy(reason);
      response?.destroy(reason);
    };
    const done = () => {
      clearTimeout(connectTimer);
      clearTimeout(headersTimer);
      signal.removeEventListener('abort', onAbort);
    };
    signal.addEventListener('abort', onAbort, { once: true });

    outgoing.on('socket', (socket: Socket) => {
      const awaitHeaders = () => {
        headersTimer = later(request.headersTimeout, () =>
          outgoing.destroy(
            new TransportError('HEADERS_TIMEOUT', `no answer within ${request.headersTimeout} ms`),
          ),
        );
      };
      if (!socket.connecting) {
        awaitHeaders();
        return;
      }
      connectTimer = later(options.connectTimeoutMs, () =>
        outgoing.destroy(
          new TransportError(
            'CONNECT_TIMEOUT',
            `connecting to ${origin.host} took over ${options.connectTimeoutMs} ms`,
          ),
        ),
      );
      socket.once(secure ? 'secureConnect' : 'connect', () => {
        clearTimeout(connectTimer);
        awaitHeaders();
      });
    });
    outgoing.on('response', (incoming) => {
      clearTimeout(headersTimer);
      response = incoming;
      incoming.on('close', done);
      // Errors are read through the body's iterator; this keeps a late one from being unhandled.
      incoming.on('error', () => undefined);
      resolve({
        statusCode: incoming.statusCode ?? 0,
        headers: incoming.headers,
        body: bodyOf(incoming, request, signal),
      });
    });
    outgoing.on('error', (error) => {
      done();
      reject(error);
    });
    outgoing.on('close', () => {
      if (!response) done();
    });
    outgoing.end(payload);
  });
}

/** The answer's body as chunks, each awaited at most `bodyTimeout`; a connection that ends early is CUT_OFF. */
function bodyOf(incoming: IncomingMessage, request: TransportRequest, signal: AbortSignal): ResponseBody {
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const pieces = incoming[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
    let finished = false;
    try {
      while (true) {
        const timer = later(request.bodyTimeout, () =>
          incoming.destroy(
            new TransportError('BODY_TIMEOUT', `no piece of the answer for ${request.bodyTimeout} ms`),
          ),
        );
        let step: IteratorResult<Uint8Array>;
        try {
          step = await pieces.next();
        } catch (error) {
          if (error instanceof TransportError || signal.aborted) throw error;
          throw new TransportError(
            'CUT_OFF',
            `the connection closed before the answer's end (${errorMessage(error)})`,
            { cause: error },
          );
        } finally {
          clearTimeout(timer);
        }
        if (step.done) {
          finished = true;
          if (!incoming.complete) {
            throw new TransportError('CUT_OFF', "the connection closed before the answer's end");
          }
          return;
        }
        yield step.value;
      }
    } finally {
      // A reader that stopped early: the rest of the answer is not wanted, nor its connection.
      if (!finished) incoming.destroy();
    }
  }
  let started = false;
  const iterate = () => {
    if (started) throw new Error('an answer body can be read once');
    started = true;
    return chunks();
  };
  return {
    [Symbol.asyncIterator]: iterate,
    async dump() {
      for await (const _ of iterate());
    },
    destroy: () => incoming.destroy(),
  };
}
