/**
 * The step worker's logic, behind the SQS-triggered Lambda `step-worker`: each record of a batch
 * is one `{jobId, version}` message and one engine step, processed on its own (Powertools batch,
 * partial batch responses), so one bad record never fails the others.
 *
 * - A body that is not a work message is logged and reported as failed: SQS moves it to the DLQ
 *   after `maxReceiveCount` receives.
 * - An infrastructure failure (DynamoDB, S3, SQS unreachable) fails the record, which comes back
 *   after the visibility timeout; the engine's version checks make the repeat harmless.
 * - Records are processed one after another, and none is started with less than the margin left
 *   before the function's deadline: the rest are reported as failed, so they come back after the
 *   visibility timeout rather than being cut off halfway.
 * - A record's upstream calls are aborted a reserve before the deadline, so a slow call ends as the
 *   engine's `timeout` failure, committed like any other, instead of outlasting the function.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { parseWorkMessage } from '../../backends/aws';
import type { ParkedJobs } from '../../engine/admission/parked-jobs';
import { type ReleaseOptions, releaseParked } from '../../engine/admission/release';
import { findStep } from '../../engine/advance';
import type { EngineDeps } from '../../engine/deps';
import { isTerminal, type Job } from '../../engine/job-record';
import { keyFingerprint, runStep, type StepReport } from '../../engine/runner';
import { errorMessage, namedErrorMessage } from '../../errors/error-message';
import { engineLogger, engineMetrics, type Observability } from './observability';

/** A record not started because the function's deadline is near (it will be delivered again). */
export class DeadlineNearError extends Error {
  override readonly name = 'DeadlineNearError';
}

export interface StepWorkerOptions {
  deps: EngineDeps;
  observability: Observability;
  /** A record is not started with less than this left before the deadline (default 15 seconds). */
  deadlineMarginMs?: number | undefined;
  /**
   * Upstream calls are aborted when this much is left before the deadline, leaving time to write
   * and commit the outcome (default 5 seconds; must be less than `deadlineMarginMs`).
   */
  upstreamReserveMs?: number | undefined;
  /**
   * Where parked jobs are listed (the DynamoDB job store): with it and `deps.admission`, each step
   * of a job is followed by a release round for the job's key (engine/admission/release.ts).
   */
  parked?: Pick<ParkedJobs, 'listParked'> | undefined;
  release?: ReleaseOptions | undefined;
  /**
   * Told when a step ends a job of a batch (the aws stack: the batch's ingest entry is woken and the
   * ingest function invoked, ./ingest-wake.ts), so the batch moves on within seconds. A failure is
   * logged; the sweeper's minute pass looks at the batch anyway.
   */
  batchEnded?: ((batchId: string, now: number) => Promise<unknown>) | undefined;
}

export interface StepWorker {
  /** The Lambda handler: the batch's failed records, for SQS to deliver again. */
  handle(event: SQSEvent, context: Context): Promise<SQSBatchResponse>;
}

/** The job's workflow, step and operation, as keys of the record's log lines. */
function logKeysOf(deps: EngineDeps, job: Job): Record<string, string | undefined> {
  const workflow = deps.workflows.get(job.workflow);
  const step = workflow && findStep(workflow, job.step);
  return {
    workflow: job.workflow,
    step: job.step,
    operation: step ? (step.kind === 'fetch' ? 'fetch' : step.operation) : undefined,
    tenant: job.tenant,
  };
}

function describeReport(report: StepReport): Record<string, unknown> {
  switch (report.outcome) {
    case 'committed':
      return {
        outcome: report.outcome,
        status: report.job.status,
        nextStep: report.job.step,
        version: report.job.version,
        nextRunAt: report.job.nextRunAt,
      };
    case 'deferred':
      return {
        outcome: report.outcome,
        reason: report.reason,
        delayMs: report.delayMs,
        ...(report.reserved ? { reserved: true } : {}),
        ...(report.parked ? { parked: true } : {}),
      };
    case 'dropped':
      return { outcome: report.outcome, reason: report.reason };
    default:
      return { outcome: report.outcome };
  }
}

/** The record's work message; an unreadable one is logged and thrown (the record then fails). */
function readMessage(record: SQSRecord, log: Observability['logger']): ReturnType<typeof parseWorkMessage> {
  try {
    if (typeof record?.body !== 'string') {
      throw new TypeError('the record has no body (not an SQS record: check the event source)');
    }
    return parseWorkMessage(record.body);
  } catch (error) {
    log.error('unreadable work message: reported as failed, so it reaches the dead-letter queue', {
      error: errorMessage(error),
    });
    throw error;
  }
}

/**
 * A signal that aborts the record's upstream calls `reserveMs` before the function's deadline. The
 * reason is a DOMException named TimeoutError, which the client reports as a `timeout`.
 */
function callCutoff(context: Context, reserveMs: number): { signal: AbortSignal; clear(): void } {
  const cutoff = new AbortController();
  const budgetMs = Math.max(0, context.getRemainingTimeInMillis() - reserveMs);
  const timer = setTimeout(
    () =>
      cutoff.abort(
        new DOMException(`the function had ${reserveMs} ms left before its deadline`, 'TimeoutError'),
      ),
    budgetMs,
  );
  return { signal: cutoff.signal, clear: () => clearTimeout(timer) };
}

/**
 * After a step of a job of `tenant`: release the key's parked jobs whose tokens have come. Its
 * failure is only logged: the step is committed, and the next step of the key runs a round again.
 */
async function releaseRound(
  deps: EngineDeps,
  options: StepWorkerOptions,
  tenant: string,
  log: Observability['logger'],
): Promise<void> {
  const parked = options.parked;
  if (!parked || !options.deps.admission) return;
  try {
    const apiKey = await deps.keys.getKey(tenant);
    if (!apiKey) return;
    const round = await releaseParked(deps, parked, keyFingerprint(apiKey), options.release);
    if (round.released > 0 || round.lost > 0) log.info('parked jobs released', { ...round });
  } catch (error) {
    log.warn('could not release parked jobs; the next step of the key tries again', {
      error: namedErrorMessage(error),
    });
  }
}

/** After a step that ended a job of a batch: the batch is woken; a failure is only logged. */
async function batchRound(options: StepWorkerOptions, job: Job, log: Observability['logger']): Promise<void> {
  if (!options.batchEnded || job.batchId === undefined || !isTerminal(job.status)) return;
  try {
    const woke = await options.batchEnded(job.batchId, Date.now());
    log.debug('batch woken', { batchId: job.batchId, woke });
  } catch (error) {
    log.warn("could not wake the job's batch; the sweeper's next minute pass looks at it", {
      batchId: job.batchId,
      error: namedErrorMessage(error),
    });
  }
}

/** Builds the step worker around one set of engine dependencies (created once per Lambda instance). */
export function createStepWorker(options: StepWorkerOptions): StepWorker {
  const { deps, observability } = options;
  const { logger, metrics } = observability;
  const marginMs = options.deadlineMarginMs ?? 15_000;
  const reserveMs = options.upstreamReserveMs ?? 5_000;
  if (!(reserveMs >= 0 && reserveMs < marginMs)) {
    throw new RangeError(
      `upstreamReserveMs (${reserveMs}) must be at least 0 and less than deadlineMarginMs (${marginMs})`,
    );
  }

  const processRecord = async (record: SQSRecord, context: Context, deadline: { told: boolean }) => {
    const left = context.getRemainingTimeInMillis();
    if (left < marginMs) {
      if (!deadline.told) {
        deadline.told = true;
        logger.info('deadline near: leaving the rest of the batch for the next delivery', {
          remainingMs: left,
        });
      }
      throw new DeadlineNearError(`only ${left} ms left, less than the ${marginMs} ms margin`);
    }
    const log = logger.createChild();
    // A record missing its parts (a hand-made or test event) is logged, not a bare TypeError.
    log.setCorrelationId(typeof record?.messageId === 'string' ? record.messageId : undefined);
    log.appendKeys({ receiveCount: Number(record?.attributes?.ApproximateReceiveCount) || undefined });
    const message = readMessage(record, log);
    log.appendKeys({ jobId: message.jobId, messageVersion: message.version });
    const cutoff = callCutoff(context, reserveMs);
    let tenant: string | undefined;
    const recordDeps: EngineDeps = {
      ...deps,
      callSignal: cutoff.signal,
      onJobRead: (job) => {
        tenant = job.tenant;
        log.appendKeys(logKeysOf(deps, job));
      },
      log: engineLogger(log),
      metrics: engineMetrics(metrics),
    };
    try {
      const report = await runStep(recordDeps, message);
      log.info('step done', describeReport(report));
      if (tenant !== undefined && (report.outcome === 'committed' || report.outcome === 'deferred'))
        await releaseRound(recordDeps, options, tenant, log);
      if (report.outcome === 'committed') await batchRound(options, report.job, log);
    } catch (error) {
      log.error('step failed: the message will be delivered again', {
        error: namedErrorMessage(error),
      });
      throw error;
    } finally {
      cutoff.clear();
    }
  };

  return {
    async handle(event, context) {
      logger.addContext(context);
      if (!Array.isArray((event as Partial<SQSEvent> | undefined)?.Records)) {
        logger.error('not an SQS event (no Records list): nothing processed; check the trigger', {
          keys: event && typeof event === 'object' ? Object.keys(event).slice(0, 10) : typeof event,
        });
        return { batchItemFailures: [] };
      }
      const processor = new BatchProcessor(EventType.SQS);
      const deadline = { told: false };
      try {
        return await processPartialResponse(
          event,
          (record: SQSRecord) => processRecord(record, context, deadline),
          processor,
          {
            context,
            processInParallel: false,
            throwOnFullBatchFailure: false,
          },
        );
      } finally {
        if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
      }
    },
  };
}
