/**
 * Following `GET /events` on a stack on AWS, where the HTTP API cannot stream and the route is a long
 * poll: each request waits for the events after the cursor, and the next one sends the answer's
 * cursor back, so nothing is missed between two requests. The server says how long it waits at most
 * (`wait` in its answer: bounded by the api function's timeout), and a request that outlasts that by
 * far is given up as unreachable, whatever the stack's settings.
 *
 *   const stop = new AbortController();
 *   await followEvents(api, { filter: { batchId }, signal: stop.signal, onAnswer: ({ events }) => ... });
 *
 * A failure (the network, a refusal, an answer that is not the long poll's) is told once through
 * `onUnreachable`, then retried after 1, 2, 4 ... up to 30 seconds; `onReachable` tells when it answers
 * again. It resolves when the signal aborts.
 */
import * as z from 'zod';
import type { JobApiClient } from './index';

/** One event of the feed: `job`, `step`, `answer`, `batch` or `reset` (see the route's description). */
export interface LongPollEvent {
  type: string;
  id?: string | number | undefined;
  data: unknown;
}

/** One answer of the long poll: its events (possibly none), and the longest the server waited. */
export interface LongPollPage {
  events: LongPollEvent[];
  cursor: string;
  /** Seconds the server waits at most for a change (absent from a server that does not say). */
  waitSeconds: number | undefined;
}

export interface FollowEventsOptions {
  /** Which changes: a tenant's, a batch's or one job's (every one the caller may see when empty). */
  filter: { tenant?: string | undefined; batchId?: string | undefined; jobId?: string | undefined };
  /** Ends the following (a request in flight is aborted). */
  signal: AbortSignal;
  /** Every answer, with or without events: a caller may look at the state again each time. */
  onAnswer(page: LongPollPage): void;
  /** The feed failed (once per outage): why, without any credential. */
  onUnreachable?: ((reason: string) => void) | undefined;
  /** The feed answered again after `onUnreachable`. */
  onReachable?: (() => void) | undefined;
  /** Asked of the server, in seconds (0 to 20). Default: 20, the most the route allows. */
  waitSeconds?: number | undefined;
  /**
   * Beyond the server's wait, how long a request may take before it counts as unreachable.
   * Default: 10 seconds. Before the first answer, the wait is taken as API Gateway's 30 s limit.
   */
  slackMs?: number | undefined;
  /** Longest pause between two tries after a failure. Default: 30 seconds. */
  maxRetryMs?: number | undefined;
  sleep?: ((ms: number, signal: AbortSignal) => Promise<void>) | undefined;
}

/** API Gateway's HTTP API ends a request at 30 s: no long poll waits longer. */
const gatewayLimitMs = 30_000;

const answerSchema = z.object({
  events: z.array(
    z.object({
      type: z.string(),
      id: z.union([z.string(), z.number()]).optional(),
      data: z.unknown(),
    }),
  ),
  cursor: z.string().min(1),
  wait: z.number().min(0).optional(),
});

const abortableSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/** Follows the long poll until `signal` aborts (see the file's comment). */
export async function followEvents(client: JobApiClient, options: FollowEventsOptions): Promise<void> {
  const sleep = options.sleep ?? abortableSleep;
  const slackMs = options.slackMs ?? 10_000;
  let cursor: string | undefined;
  let serverWaitMs: number | undefined;
  let failures = 0;
  while (!options.signal.aborted) {
    const outcome = await pollOnce(client, options, cursor, (serverWaitMs ?? gatewayLimitMs) + slackMs);
    if (options.signal.aborted) return;
    if ('page' in outcome) {
      if (failures > 0) options.onReachable?.();
      failures = 0;
      cursor = outcome.page.cursor;
      if (outcome.page.waitSeconds !== undefined) serverWaitMs = outcome.page.waitSeconds * 1000;
      options.onAnswer(outcome.page);
      continue;
    }
    if (failures === 0) options.onUnreachable?.(outcome.failure);
    failures += 1;
    await sleep(Math.min(options.maxRetryMs ?? 30_000, 1000 * 2 ** (failures - 1)), options.signal);
  }
}

/** One request of the long poll: its page, or why it failed. */
async function pollOnce(
  client: JobApiClient,
  options: FollowEventsOptions,
  cursor: string | undefined,
  timeoutMs: number,
): Promise<{ page: LongPollPage } | { failure: string }> {
  const signal = AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]);
  try {
    const { data, error, response } = await client.GET('/events', {
      params: {
        query: {
          ...options.filter,
          wait: String(options.waitSeconds ?? 20),
          ...(cursor === undefined ? {} : { lastEventId: cursor }),
        },
      },
      signal,
      // Read here: a server that streams (opflow serve) would never end a JSON read.
      parseAs: 'stream',
    });
    if (!response.ok) {
      const message = (error as { error?: { message?: unknown } } | undefined)?.error?.message;
      return {
        failure: `GET /events answered ${response.status}${typeof message === 'string' ? `: ${message}` : ''}`,
      };
    }
    const type = response.headers.get('content-type') ?? 'no content type';
    if (!/^application\/json\b/i.test(type)) {
      await data?.cancel();
      return { failure: `GET /events answered ${type}, not a long poll's JSON (a server that streams)` };
    }
    const parsed = answerSchema.safeParse(await response.json());
    if (!parsed.success) return { failure: "GET /events did not answer a long poll's {events, cursor}" };
    return {
      page: { events: parsed.data.events, cursor: parsed.data.cursor, waitSeconds: parsed.data.wait },
    };
  } catch (error) {
    if (options.signal.aborted) return { failure: 'stopped' };
    if (signal.aborted)
      return { failure: `GET /events gave no answer within ${Math.round(timeoutMs / 1000)} s` };
    const cause = (error as { cause?: { code?: unknown } })?.cause?.code;
    return {
      failure: `GET /events failed: ${error instanceof Error ? error.message : String(error)}${typeof cause === 'string' ? ` (${cause})` : ''}`,
    };
  }
}
