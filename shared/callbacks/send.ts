/**
 * One callback attempt: vet the target (ssrf-guard.ts), sign the body with Standard Webhooks headers
 * (the standardwebhooks package), POST it over a connection pinned to the vetted address, follow no
 * redirect, read at most a few KiB of the answer, give up after short timeouts.
 */
import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import { type CallbackUrlPolicy, CallbackUrlRefused, type Resolver, vetCallbackTarget } from './ssrf-guard';

export interface CallbackRequest {
  url: string;
  /** The `webhook-id`: the same for every attempt of one delivery, so receivers can de-duplicate. */
  messageId: string;
  /** The JSON body, sent and signed byte for byte. */
  body: string;
  /** A Standard Webhooks secret (`whsec_<base64>`). */
  secret: string;
  /** Seconds since the epoch for `webhook-timestamp`. */
  timestampSeconds: number;
}

export interface CallbackSendOptions {
  policy?: CallbackUrlPolicy | undefined;
  resolve?: Resolver | undefined;
  /** Connect, headers and body timeouts. Default: 5 s, 10 s, 10 s. */
  connectTimeoutMs?: number | undefined;
  headersTimeoutMs?: number | undefined;
  bodyTimeoutMs?: number | undefined;
  /** The most of an answer's body that is read (and kept, for the attempt record). Default: 1 KiB. */
  maxAnswerBytes?: number | undefined;
}

export type CallbackOutcome =
  | { kind: 'answered'; status: number; retryAfterMs?: number | undefined; answer: string }
  /** Not sent: the URL is refused by the guard. Permanent. */
  | { kind: 'refused'; message: string }
  /** Sent (or tried) but no answer: connection refused, TLS, timeout. */
  | { kind: 'failed'; message: string };

/** Parses Retry-After (seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The three Standard Webhooks headers for a body. */
export function signCallback(
  req: Pick<CallbackRequest, 'messageId' | 'body' | 'secret' | 'timestampSeconds'>,
): Record<string, string> {
  const signature = new Webhook(req.secret).sign(
    req.messageId,
    new Date(req.timestampSeconds * 1000),
    req.body,
  );
  return {
    'webhook-id': req.messageId,
    'webhook-timestamp': String(req.timestampSeconds),
    'webhook-signature': signature,
  };
}

function describeFailure(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  // Node's connection errors name the address at most, never the path or query of the URL.
  return code ? `${code}: ${message}` : message;
}

class CallbackTimeout extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface PostTimeouts {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

/**
 * POSTs `body` to `url` over a new connection to `address` (no second lookup: the name only goes in
 * the Host header and TLS's server name), with Node's own HTTP client: no redirect followed, no
 * connection kept. Resolves with the answer's head; its body is the caller's to read or destroy.
 */
function postPinned(
  url: URL,
  address: string,
  family: 4 | 6,
  headers: Record<string, string>,
  body: string,
  timeouts: PostTimeouts,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'POST',
      agent: false,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        if (options?.all) callback(null, [{ address, family } satisfies LookupAddress]);
        else callback(null, address, family);
      }) as never,
    });
    const timer = (code: string, what: string, ms: number) =>
      setTimeout(() => req.destroy(new CallbackTimeout(code, `${what} timed out after ${ms} ms`)), ms);
    let waiting = timer('CONNECT_TIMEOUT', 'connecting', timeouts.connectTimeoutMs);
    req.once('socket', (socket) => {
      const connected = () => {
        clearTimeout(waiting);
        waiting = timer('HEADERS_TIMEOUT', 'waiting for the answer', timeouts.headersTimeoutMs);
      };
      if (!socket.connecting) connected();
      else socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', connected);
    });
    req.once('response', (response) => {
      clearTimeout(waiting);
      // At most this long between two pieces of the answer's body.
      response.setTimeout(timeouts.bodyTimeoutMs, () =>
        response.destroy(
          new CallbackTimeout(
            'BODY_TIMEOUT',
            `reading the answer timed out after ${timeouts.bodyTimeoutMs} ms`,
          ),
        ),
      );
      resolve(response);
    });
    req.on('error', (error) => {
      clearTimeout(waiting);
      reject(error);
    });
    req.end(body);
  });
}

export async function sendCallback(
  req: CallbackRequest,
  options: CallbackSendOptions = {},
  now: number = Date.now(),
): Promise<CallbackOutcome> {
  let target: Awaited<ReturnType<typeof vetCallbackTarget>>;
  try {
    target = await vetCallbackTarget(req.url, options.policy, options.resolve);
  } catch (error) {
    if (error instanceof CallbackUrlRefused) return { kind: 'refused', message: error.message };
    throw error;
  }
  const maxAnswerBytes = options.maxAnswerBytes ?? 1024;
  let answer: IncomingMessage | undefined;
  try {
    // The connection goes to the vetted address whatever a second lookup would say (DNS rebinding).
    answer = await postPinned(
      target.url,
      target.address,
      target.family,
      { 'content-type': 'application/json', 'user-agent': 'opflow-callbacks/1', ...signCallback(req) },
      req.body,
      {
        connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
        headersTimeoutMs: options.headersTimeoutMs ?? 10_000,
        bodyTimeoutMs: options.bodyTimeoutMs ?? 10_000,
      },
    );
    // Read a little of the answer (for the attempt record), then drop the rest.
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of answer) {
        const buffer = Buffer.from(chunk as Uint8Array);
        chunks.push(buffer.subarray(0, Math.max(0, maxAnswerBytes - size)));
        size += buffer.byteLength;
        if (size >= maxAnswerBytes) break;
      }
    } catch {
      // An answer cut short still has its status.
    }
    const retryAfterHeader = answer.headers['retry-after'];
    return {
      kind: 'answered',
      status: answer.statusCode ?? 0,
      retryAfterMs: parseRetryAfter(
        Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader,
        now,
      ),
      answer: Buffer.concat(chunks).toString('utf8').slice(0, 200),
    };
  } catch (error) {
    return { kind: 'failed', message: describeFailure(error).slice(0, 300) };
  } finally {
    answer?.destroy();
  }
}
