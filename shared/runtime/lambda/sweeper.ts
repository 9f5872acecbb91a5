/**
 * The sweeper's logic, behind the scheduled Lambda `sweeper` (every minute): re-send a message for
 * every unfinished job whose `nextRunAt` is well past (a message lost between commit and send, or a
 * wait longer than SQS can hold), so the step worker looks at it again; jobs past their deadline
 * are failed by the step worker when that message arrives. Then the callback outbox entries that
 * came due are marked (the job table's stream hands each to the callback function: a retry, a
 * recheck, an entry whose sender died). Where the stack has reviewers, the reviewers' pass follows,
 * within the run's time budget.
 */
import type { Context } from 'aws-lambda';
import { nudgeParked } from '../../engine/admission/nudge';
import type { ParkedJobs } from '../../engine/admission/parked-jobs';
import type { SweepDeps } from '../../engine/deps';
import { expireParked, type SweepOptions, sweep } from '../../engine/sweep';
import { errorMessage } from '../../errors/error-message';
import type { ReviewPassResult } from '../../reviewers/review-pass';
import { engineLogger, engineMetrics, type Observability } from './observability';

export interface SweeperOptions {
  deps: SweepDeps;
  observability: Observability;
  /** Passed to the engine's sweep (default: jobs overdue by 30 s, at most 500 per run). */
  sweep?: SweepOptions | undefined;
  /** With it, parked jobs of keys whose line has ended are sent their message (`nudgeParked`). */
  parked?: ParkedJobs | undefined;
  /**
   * With it, the callback outbox entries due now are marked, each a stream record that wakes the
   * callback function; returns how many.
   */
  callbacks?: ((now: number) => Promise<number>) | undefined;
  /**
   * With it, the ingest function is invoked when an entry of its schedule is due (a batch whose
   * jobs run, an upload no driver took, a driver that died); returns whether it was.
   */
  ingest?: ((now: number) => Promise<boolean>) | undefined;
  /**
   * With it, the reviewers' pass runs after the sweep: notices, reminders and timeout defaults of the
   * jobs awaiting a selection (lambda/reviewers.ts), starting nothing after `until` (epoch ms).
   */
  reviews?: ((until: number) => Promise<ReviewPassResult | undefined>) | undefined;
}

export interface Sweeper {
  /** The Lambda handler: what this run re-sent. */
  handle(event: unknown, context: Context): Promise<SweepRun>;
}

/** What a run did. */
export interface SweepRun {
  requeued: number;
  expired: number;
  nudged: number;
  expiredParked: number;
  /** Callback outbox entries marked due for the callback function. */
  callbacksDue: number;
  /** Whether the ingest function was woken (an entry of its schedule was due). */
  ingestWoken?: boolean | undefined;
  /** The reviewers' pass, when the stack has reviewers. */
  reviews?: ReviewPassResult | undefined;
}

/** The reviewers' pass stops starting notices this long before the function's timeout. */
const reviewMarginMs = 15_000;

/** The callbacks' pass, logged; a failure is the next run's to retry, never the sweep's. */
async function runCallbacks(
  callbacks: NonNullable<SweeperOptions['callbacks']>,
  logger: Observability['logger'],
): Promise<number> {
  try {
    return await callbacks(Date.now());
  } catch (error) {
    logger.error('callbacks: the due entries were not marked; the next sweep marks them', {
      error: errorMessage(error),
    });
    return 0;
  }
}

/** The ingest pass, logged; a failure is the next run's to retry, never the sweep's. */
async function runIngest(
  ingest: NonNullable<SweeperOptions['ingest']>,
  logger: Observability['logger'],
): Promise<boolean> {
  try {
    return await ingest(Date.now());
  } catch (error) {
    logger.error('ingest: the function was not woken; the next sweep tries again', {
      error: errorMessage(error),
    });
    return false;
  }
}

/** The reviewers' pass, logged; a failure is the next run's to retry, never the sweep's. */
async function runReviews(
  reviews: NonNullable<SweeperOptions['reviews']>,
  context: Context,
  logger: Observability['logger'],
): Promise<ReviewPassResult | undefined> {
  try {
    return await reviews(Date.now() + Math.max(0, context.getRemainingTimeInMillis() - reviewMarginMs));
  } catch (error) {
    logger.error('reviewers: the pass failed; the next sweep runs it again', { error: errorMessage(error) });
    return undefined;
  }
}

export function createSweeper(options: SweeperOptions): Sweeper {
  const { logger, metrics } = options.observability;
  return {
    async handle(event, context) {
      logger.addContext(context);
      const id = (event as { id?: unknown } | undefined)?.id;
      logger.setCorrelationId(typeof id === 'string' ? id : context.awsRequestId);
      const deps: SweepDeps = {
        ...options.deps,
        log: engineLogger(logger),
        metrics: engineMetrics(metrics),
      };
      try {
        const result = await sweep(deps, options.sweep);
        const nudged = options.parked ? await nudgeParked(deps, options.parked) : 0;
        // Parked jobs past their deadline, whatever their key's line: the runner fails them.
        const expiredParked = options.parked ? await expireParked(deps, options.parked) : 0;
        const callbacksDue = options.callbacks ? await runCallbacks(options.callbacks, logger) : 0;
        const ingestWoken = options.ingest ? await runIngest(options.ingest, logger) : undefined;
        const reviews = options.reviews && (await runReviews(options.reviews, context, logger));
        const run = {
          ...result,
          nudged,
          expiredParked,
          callbacksDue,
          ...(ingestWoken !== undefined ? { ingestWoken } : {}),
          ...(reviews ? { reviews } : {}),
        };
        logger.info('sweep done', run);
        return run;
      } finally {
        if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
      }
    },
  };
}
