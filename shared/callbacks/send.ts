/**
 * One callback attempt: vet the target (ssrf-guard.ts), sign the body with Standard Webhooks headers
 * (the standardwebhooks package), POST it over a connection pinned to the vetted address, follow no
 * redirect, read at most a small cap of the answer. The whole attempt (lookup, connection, the
 * answer's head and body) has one deadline, so a receiver that answers a byte at a time cannot hold
 * a sender longer than that; a shutdown signal ends it at once, unrecorded.
 */
import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { errorMessage } from '../errors/error-message';
import {
  type CallbackUrlPolicy,
  CallbackUrlRefused,
  checkCallbackUrl,
  describeHost,
  type Resolver,
  vetCallbackTarget,
} from './ssrf-guard';

export interface CallbackRequest {
  url: string;
  /** The `webhook-id`: the same for every attempt of one delivery, so receivers can de-duplicate. */
  messageId: string;
  /** The JSON body, sent and signed byte for byte. */
  body: string;
  /** A Standard Webhooks secret (`whsec_<base64>`); without one the body goes unsigned (a Slack or Teams webhook). */
  secret?: string | undefined;
  /** Seconds since the epoch for `webhook-timestamp`. */
  timestampSeconds: number;
}

export interface CallbackSendOptions {
  policy?: CallbackUrlPolicy | undefined;
  resolve?: Resolver | undefined;
  /** The whole attempt: lookup, connection, the answer's head and its body. Default: 15 s. */
  deadlineMs?: number | undefined;
  /** Connecting alone (within the deadline). Default: 5 s. */
  connectTimeoutMs?: number | undefined;
  /** The most of an answer's body that is read (and kept, for the attempt record). Default: 1 KiB. */
  maxAnswerBytes?: number | undefined;
  /** Shutdown: ends the attempt at once; an attempt ended before its answer came is `interrupted`. */
  signal?: AbortSignal | undefined;
}

/** The whole-attempt deadline of a callback, by default. */
export const callbackDeadlineMs = 15_000;

export type CallbackOutcome =
  | { kind: 'answered'; status: number; retryAfterMs?: number | undefined; answer: string }
  /** Not sent: the URL is refused by the guard, or its name does not exist (ENOTFOUND). Permanent. */
  | { kind: 'refused'; message: string }
  /** Sent (or tried) but no answer: a failed or temporary lookup, connection refused, TLS, deadline. */
  | { kind: 'failed'; message: string }
  /** Stopped by shutdown before an answer: not an attempt; the delivery stays due. */
  | { kind: 'interrupted' };

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
  req: Pick<CallbackRequest, 'messageId' | 'body' | 'timestampSeconds'> & { secret: string },
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
  const message = errorMessage(error);
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

/**
 * Lookup failures that say the name does not exist: the callback is refused. Any other failure
 * (EAI_AGAIN, a timeout, a server failure) is temporary and retried like a refused connection.
 * Node's `dns.lookup` reports both "no such name" and "no address" as ENOTFOUND.
 */
const permanentLookupCodes = new Set(['ENOTFOUND', 'ENODATA']);

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Rejects with the signal's reason when it aborts first (a lookup cannot itself be cancelled). */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * POSTs `body` to `url` over a new connection to `address` (no second lookup: the name only goes in
 * the Host header and TLS's server name), with Node's own HTTP client: no redirect followed, no
 * connection kept. Resolves with the answer's head; its body is the caller's to read or destroy.
 * `signal` (the deadline or shutdown) destroys the request at any point.
 */
function postPinned(
  url: URL,
  target: { address: string; family: 4 | 6 },
  headers: Record<string, string>,
  body: string,
  connectTimeoutMs: number,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const { address, family } = target;
    const req = send(url, {
      method: 'POST',
      agent: false,
      signal,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        if (options?.all) callback(null, [{ address, family } satisfies LookupAddress]);
        else callback(null, address, family);
      }) as never,
    });
    const connecting = setTimeout(
      () =>
        req.destroy(
          new CallbackTimeout('CONNECT_TIMEOUT', `connecting timed out after ${connectTimeoutMs} ms`),
        ),
      connectTimeoutMs,
    );
    req.once('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connecting);
      else
        socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connecting));
    });
    req.once('response', (response) => {
      clearTimeout(connecting);
      resolve(response);
    });
    req.on('error', (error) => {
      clearTimeout(connecting);
      reject(error);
    });
    req.end(body);
  });
}

/** Reads at most `maxBytes` of an answer, stopping at the cap, at the end, or when `signal` aborts. */
async function readCapped(answer: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  const stop = () => answer.destroy();
  signal.addEventListener('abort', stop, { once: true });
  try {
    for await (const chunk of answer) {
      const buffer = Buffer.from(chunk as Uint8Array);
      chunks.push(buffer.subarray(0, Math.max(0, maxBytes - size)));
      size += buffer.byteLength;
      if (size >= maxBytes) break;
    }
  } catch {
    // An answer cut short (by the deadline, shutdown or the receiver) still has its status.
  } finally {
    signal.removeEventListener('abort', stop);
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, 200);
}

/** Resolves the URL's host once, within the deadline; a lookup failure is refused or failed by its code. */
async function lookupTarget(
  url: URL,
  resolve: Resolver,
  signal: AbortSignal,
): Promise<{ addresses: { address: string; family: number }[] } | CallbackOutcome> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return { addresses: [] };
  try {
    return { addresses: await raceAbort(resolve(host), signal) };
  } catch (error) {
    if (signal.aborted) throw error;
    const code = (error as { code?: string }).code ?? 'lookup failed';
    const message = `${describeHost(url)} does not resolve (${code})`;
    return permanentLookupCodes.has(code)
      ? { kind: 'refused', message: `callbackUrl: ${message}` }
      : { kind: 'failed', message: `${code}: looking up ${describeHost(url)} failed; tried again later` };
  }
}

/**
 * One attempt. Never throws for the receiver's faults: they are an outcome. `now` is the time the
 * Retry-After of an HTTP date is measured from.
 */
export async function sendCallback(
  req: CallbackRequest,
  options: CallbackSendOptions = {},
  now: number = Date.now(),
): Promise<CallbackOutcome> {
  const deadlineMs = options.deadlineMs ?? callbackDeadlineMs;
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new CallbackTimeout('DEADLINE', `no complete answer within ${deadlineMs} ms`)),
    deadlineMs,
  );
  const signal = options.signal ? AbortSignal.any([deadline.signal, options.signal]) : deadline.signal;
  const interrupted = () => options.signal?.aborted === true && !deadline.signal.aborted;
  let answer: IncomingMessage | undefined;
  try {
    let url: URL;
    try {
      url = checkCallbackUrl(req.url, options.policy);
    } catch (error) {
      if (error instanceof CallbackUrlRefused) return { kind: 'refused', message: error.message };
      throw error;
    }
    const looked = await lookupTarget(url, options.resolve ?? systemResolver, signal);
    if ('kind' in looked) return looked;
    let target: Awaited<ReturnType<typeof vetCallbackTarget>>;
    try {
      // The guard vets the addresses just looked up (no second lookup).
      target = await vetCallbackTarget(req.url, options.policy, async () => looked.addresses);
    } catch (error) {
      if (error instanceof CallbackUrlRefused) return { kind: 'refused', message: error.message };
      throw error;
    }
    // The connection goes to the vetted address whatever a second lookup would say (DNS rebinding).
    answer = await postPinned(
      target.url,
      target,
      {
        'content-type': 'application/json',
        'user-agent': 'opflow-callbacks/1',
        ...(req.secret === undefined ? {} : signCallback({ ...req, secret: req.secret })),
      },
      req.body,
      Math.min(options.connectTimeoutMs ?? 5_000, deadlineMs),
      signal,
    );
    // A little of the answer (for the attempt record) within what is left of the deadline.
    const text = await readCapped(answer, options.maxAnswerBytes ?? 1024, signal);
    const retryAfterHeader = answer.headers['retry-after'];
    return {
      kind: 'answered',
      status: answer.statusCode ?? 0,
      retryAfterMs: parseRetryAfter(
        Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader,
        now,
      ),
      answer: text,
    };
  } catch (error) {
    if (interrupted()) return { kind: 'interrupted' };
    const cause = deadline.signal.aborted ? deadline.signal.reason : error;
    return { kind: 'failed', message: describeFailure(cause).slice(0, 300) };
  } finally {
    clearTimeout(timer);
    answer?.destroy();
  }
}
