/**
 * The tests' fetch to servers they start themselves (the S3 notification proxy in front of fauxqs,
 * the local API gateway, the job API server in-process): every request on a connection of its own,
 * closed after its answer.
 *
 * Why: global fetch keeps sockets alive (undici's Agent) for as long as the server's `Keep-Alive:
 * timeout=N` hint says, less undici's `keepAliveTimeoutThreshold` (2 s), and closes them from a
 * timer. Two ways a test still sent a request on a socket the server was closing, and failed with
 * `SocketError: other side closed` (or `ECONNRESET`):
 * - The S3 notification proxy passed on fauxqs' hint (fastify: `timeout=72`) while it closes an idle
 *   socket after Node's 5 s: undici kept the socket 70 s. The proxy now sends its own hint (it drops
 *   the hop-by-hop headers, scripts/lambda/s3-notification-proxy.ts).
 * - A true hint does not help when the event loop is blocked past the server's timeout (seconds of
 *   synchronous work, a loaded two-core CI machine): when it resumes, the test's next request is
 *   written from the promise chain that ended the blocking work, before the timers phase runs
 *   undici's keep-alive timer; then the server's own idle timer (in-process) fires, or its FIN is
 *   already there (another process), and the request dies. Seen in
 *   test/integration/http/openapi.test.ts: its first request after two CPU-bound tests.
 * With `pipelining: 0` undici keeps no connection alive (its documented way to disable keep-alive):
 * no request is ever written to a socket used before, so neither race can happen, whatever the
 * server's timeout, its hint or the load. Nothing is retried: a refused connection, a reset during
 * the request or an error status still fails the test. A new loopback connection per request costs
 * well under a millisecond.
 * https://undici.nodejs.org/#/docs/api/Client?id=parameter-clientoptions (pipelining, keepAliveTimeout)
 */
import { Agent, fetch, type RequestInit, type Response } from 'undici';

/** undici's Agent with keep-alive off: one connection per request. */
export const noKeepAlive = new Agent({ pipelining: 0 });

/** fetch on a fresh connection (see the header). */
export function freshFetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, dispatcher: noKeepAlive });
}
