/**
 * What tells `opflow batch --watch` that its batch changed, so it looks again at once instead of on a
 * timer. Locally: a change committed by this process, or one read from the database's change log
 * (another process's). On aws: the job API's `GET /events` long poll, filtered by the batch; each
 * answer wakes the watch (the server's wait paces it) and its `batch` event is what the live line
 * shows (totals that follow the jobs, read by the server). Without a job API to ask (no
 * `OPFLOW_API_URL`), or while it does not answer, the watch reads the batch every 2 seconds, and says
 * so once on standard error.
 */
import * as z from 'zod';
import { followChanges } from '../engine/change-feed';
import { errorMessage } from '../errors/error-message';
import type { Backend, JobApiAccess } from '../runtime/backend';
import type { ProgressView } from './batch-display';

export interface BatchFeed {
  /** Calls the listener when the batch may have changed; returns the function that stops it. */
  wake(listener: () => void): () => void;
  /** Between two looks when nothing wakes the watch. */
  readonly roundMs: number;
  /** The batch as the feed last showed it (totals that follow its jobs), if it did. */
  latest(): ProgressView | undefined;
  stop(): void;
}

/** Reads every 2 s: the aws watch without a feed to follow. */
const readEveryMs = 2_000;
/** With the feed answering, a look this often at most when nothing came (the feed paces the rest). */
const safetyRoundMs = 60_000;

/** What a `batch` event carries that the live line shows (validated: it crossed the network). */
const batchEventSchema = z.object({
  batch: z.object({
    id: z.string(),
    items: z.number(),
    totals: z.object({
      waiting: z.number(),
      running: z.number(),
      succeeded: z.number(),
      failed: z.number(),
      cancelled: z.number(),
    }),
    thisRun: z.object({
      records: z.number(),
      created: z.number(),
      existing: z.number(),
      invalid: z.number(),
      readingDone: z.boolean(),
    }),
    calls: z.number(),
    etaMs: z.number().optional(),
  }),
});

/** The feed of the batch `batchId` on this backend; `say` writes one line to standard error. */
export async function openBatchFeed(
  backend: Backend,
  batchId: string,
  say: (line: string) => void,
): Promise<BatchFeed> {
  if (backend.work.where === 'here') {
    const feed = await backend.changeFeed();
    return {
      wake: (listener) => {
        const stopHere = backend.onJobChange(() => listener());
        const stopFeed = followChanges(feed, { batchId }, listener);
        return () => {
          stopHere();
          stopFeed();
        };
      },
      roundMs: 500,
      latest: () => undefined,
      stop: () => {},
    };
  }
  let api: JobApiAccess | undefined;
  try {
    api = await backend.work.jobApi();
  } catch (error) {
    say(`cannot follow the job API's live feed (${errorMessage(error)}): reading the batch every 2 s`);
    return readingFeed();
  }
  if (api === undefined) {
    say(
      'no job API to follow (set OPFLOW_API_URL to the stack output ApiUrl, or OPFLOW_STACK_OUTPUTS): reading the batch every 2 s',
    );
    return readingFeed();
  }
  return longPollFeed(api, batchId, say);
}

/** No feed: the watch's own timer reads the batch. */
function readingFeed(): BatchFeed {
  return { wake: () => () => {}, roundMs: readEveryMs, latest: () => undefined, stop: () => {} };
}

/** The job API's long poll, with reads every 2 s while it does not answer. */
async function longPollFeed(
  api: JobApiAccess,
  batchId: string,
  say: (line: string) => void,
): Promise<BatchFeed> {
  const { followEvents } = await import('../job-api-client/follow-events');
  const listeners = new Set<() => void>();
  const wakeAll = () => {
    for (const listener of listeners) listener();
  };
  const stop = new AbortController();
  let view: ProgressView | undefined;
  let reading: ReturnType<typeof setInterval> | undefined;
  const following = followEvents(api.client, {
    filter: { batchId },
    signal: stop.signal,
    onAnswer: ({ events }) => {
      for (const event of events) {
        if (event.type !== 'batch') continue;
        const parsed = batchEventSchema.safeParse(event.data);
        if (parsed.success && parsed.data.batch.id === batchId) view = parsed.data.batch;
      }
      wakeAll();
    },
    onUnreachable: (reason) => {
      say(
        `the live feed of ${api.url} does not answer (${reason}): reading the batch every 2 s until it does`,
      );
      view = undefined;
      reading ??= setInterval(wakeAll, readEveryMs);
    },
    onReachable: () => {
      say('the live feed answers again: following it');
      clearInterval(reading);
      reading = undefined;
    },
  });
  return {
    wake: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    roundMs: safetyRoundMs,
    latest: () => view,
    stop: () => {
      stop.abort();
      clearInterval(reading);
      void following;
    },
  };
}
