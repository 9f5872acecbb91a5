/**
 * The sweeper's logic, behind the scheduled Lambda `sweeper` (every minute): re-send a message for
 * every unfinished job whose `nextRunAt` is well past (a message lost between commit and send, or a
 * wait longer than SQS can hold), so the step worker looks at it again; jobs past their deadline
 * are failed by the step worker when that message arrives.
 */
import type { Context } from 'aws-lambda';
import type { EngineDeps } from '../../engine/deps';
import { unparkedJob } from '../../engine/job-record';
import { type SweepOptions, sweep } from '../../engine/sweep';
import { engineLogger, engineMetrics, type Observability, traced } from './observability';

/** What the sweeper reads of parked jobs (admission, issue 10): the DynamoDB job store. */
export interface ParkedJobsIndex {
  parkedBuckets(): Promise<string[]>;
  lineEndsAt(bucket: string, now: number): Promise<number | undefined>;
  listParked(bucket: string, until: number, limit: number): Promise<{ id: string; class: string }[]>;
}

export interface SweeperOptions {
  deps: EngineDeps;
  observability: Observability;
  /** Passed to the engine's sweep (default: jobs overdue by 30 s, at most 500 per run). */
  sweep?: SweepOptions | undefined;
  /** With it, parked jobs of keys whose line has ended are sent their message (`nudgeParked`). */
  parked?: ParkedJobsIndex | undefined;
}

/**
 * Parked jobs are released by the step workers after each step of their key; a key whose line of
 * tokens ended more than `graceMs` ago (default 5 s) has no step coming to do it. For each such key,
 * every parked job due within what the queue can delay (`lookaheadMs`, default the queue's maximum:
 * 15 minutes on SQS, more than the 10 minutes ahead a call is ever parked) is unparked by a commit at the version read
 * (advance's `unpark`) and sent its message for its due time, at the new version; it then takes its
 * token when it comes, as any job. A releaser working on the job meanwhile and the sweeper never
 * both go on (one conditional commit wins; the loser sends nothing), so no message goes stale
 * (before, the message was sent at the parked version, and a release round run by the first
 * nudged job's step released the others first: each of their nudges arrived stale).
 */
export async function nudgeParked(
  deps: Pick<EngineDeps, 'store' | 'queue' | 'clock'>,
  parked: ParkedJobsIndex,
  options: { graceMs?: number; lookaheadMs?: number; limit?: number } = {},
): Promise<number> {
  const now = deps.clock.now();
  let nudged = 0;
  for (const bucket of await parked.parkedBuckets()) {
    const lineEnd = await parked.lineEndsAt(bucket, now);
    if (lineEnd !== undefined && lineEnd > now - (options.graceMs ?? 5_000)) continue;
    const found = await parked.listParked(
      bucket,
      now + (options.lookaheadMs ?? deps.queue.maxDelayMs),
      options.limit ?? 100,
    );
    for (const { id } of found) {
      const job = await deps.store.get(id);
      if (!job?.parked) continue;
      const next = unparkedJob(job, now);
      if (!(await deps.store.commit(next, job.version))) continue; // a releaser won
      const message = { jobId: job.id, version: next.version };
      await deps.queue.send(message, Math.min(Math.max(0, job.nextRunAt - now), deps.queue.maxDelayMs));
      nudged++;
    }
  }
  return nudged;
}

export interface Sweeper {
  /** The Lambda handler: what this run re-sent. */
  handle(event: unknown, context: Context): Promise<{ requeued: number; expired: number; nudged: number }>;
}

export function createSweeper(options: SweeperOptions): Sweeper {
  const { logger, metrics, tracer } = options.observability;
  return {
    async handle(event, context) {
      logger.addContext(context);
      const id = (event as { id?: unknown } | undefined)?.id;
      logger.setCorrelationId(typeof id === 'string' ? id : context.awsRequestId);
      const deps: EngineDeps = {
        ...options.deps,
        log: engineLogger(logger),
        metrics: engineMetrics(metrics),
      };
      try {
        const result = await traced(tracer, '## sweep', {}, () => sweep(deps, options.sweep));
        const parked = options.parked;
        const nudged = parked
          ? await traced(tracer, '## nudge parked', {}, () => nudgeParked(deps, parked))
          : 0;
        logger.info('sweep done', { ...result, nudged });
        return { ...result, nudged };
      } finally {
        if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
      }
    },
  };
}
