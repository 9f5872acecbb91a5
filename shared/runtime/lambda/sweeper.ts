/**
 * The sweeper's logic, behind the scheduled Lambda `sweeper` (every minute): re-send a message for
 * every unfinished job whose `nextRunAt` is well past (a message lost between commit and send, or a
 * wait longer than SQS can hold), so the step worker looks at it again; jobs past their deadline
 * are failed by the step worker when that message arrives.
 */
import type { Context } from 'aws-lambda';
import { nudgeParked } from '../../engine/admission/nudge';
import type { ParkedJobs } from '../../engine/admission/parked-jobs';
import type { SweepDeps } from '../../engine/deps';
import { expireParked, type SweepOptions, sweep } from '../../engine/sweep';
import { engineLogger, engineMetrics, type Observability } from './observability';

export interface SweeperOptions {
  deps: SweepDeps;
  observability: Observability;
  /** Passed to the engine's sweep (default: jobs overdue by 30 s, at most 500 per run). */
  sweep?: SweepOptions | undefined;
  /** With it, parked jobs of keys whose line has ended are sent their message (`nudgeParked`). */
  parked?: ParkedJobs | undefined;
}

export interface Sweeper {
  /** The Lambda handler: what this run re-sent. */
  handle(event: unknown, context: Context): Promise<{ requeued: number; expired: number; nudged: number }>;
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
        logger.info('sweep done', { ...result, nudged, expiredParked });
        return { ...result, nudged, expiredParked };
      } finally {
        if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
      }
    },
  };
}
