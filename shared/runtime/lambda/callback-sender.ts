/**
 * The callback sender on aws, behind the Lambda `callback-sender`, on the job table's stream: its
 * event source mapping hands it the callback outbox entries written due (a job with a callback
 * ended) or marked due since by the sweeper's minute pass (a retry's time came, a recheck, an entry
 * whose sender died). The same sender as locally (shared/callbacks/sender.ts) over the DynamoDB
 * outbox and the per-tenant signing secrets; nothing runs while no entry comes due.
 */
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import * as z from 'zod';
import { callbackOutboxPartition } from '../../backends/aws/dynamodb-callback-outbox';
import { type CallbackSenderDeps, runCallbackSenderFor, type SenderRunResult } from '../../callbacks/sender';
import { engineLogger, type Observability } from './observability';

/** Passes one invocation makes at most over the entries it put back due at once (a busy host's). */
const maxPasses = 20;
/** Attempts in flight are ended this long before the function's timeout; their entries stay due. */
const shutdownMarginMs = 5_000;

/** The part of an outbox entry item's new image the sender reads. */
const entryImageSchema = z.object({
  PK: z.object({ S: z.literal(callbackOutboxPartition) }),
  jobId: z.object({ S: z.string().min(1).max(200) }),
});

/** Some entries could not be handled (a store or Secrets Manager fault): they come due again. */
export class CallbackEntriesFailedError extends Error {
  override readonly name = 'CallbackEntriesFailedError';
}

export interface CallbackSenderHandler {
  handle(event: DynamoDBStreamEvent, context: Context): Promise<{ result: SenderRunResult }>;
}

/** The job of an outbox entry's stream record; undefined (and why) when the record is not one. */
export function jobOfEntryRecord(record: DynamoDBRecord): { jobId?: string; problem?: string } {
  const parsed = entryImageSchema.safeParse(record.dynamodb?.NewImage);
  if (parsed.success) return { jobId: parsed.data.jobId.S };
  const issue = parsed.error.issues[0];
  const where = ['NewImage', ...(issue?.path ?? [])].join('.');
  return { problem: `${where}: ${issue?.message}` };
}

/**
 * A batch of due entries, delivered side by side (8 at once, 2 per receiver host). An entry whose
 * host is at its bound is put back due at once and taken in the next pass of this invocation, once
 * the host's deliveries are done; a retry or a recheck is put back at its time (the sweeper marks it
 * then). When entries could not be handled the invocation fails after the others are done (the
 * function's errors metric), and their entries come due again when their lease ends.
 */
export function createCallbackSenderHandler(options: {
  deps: CallbackSenderDeps;
  observability: Observability;
}): CallbackSenderHandler {
  const { logger } = options.observability;
  return {
    async handle(event, context) {
      logger.addContext(context);
      const jobIds = new Set<string>();
      for (const record of event.Records ?? []) {
        const { jobId, problem } = jobOfEntryRecord(record);
        if (jobId) jobIds.add(jobId);
        else
          logger.error('callback sender: a stream record that is not an outbox entry was dropped', {
            problem,
          });
      }
      const signal = AbortSignal.timeout(Math.max(0, context.getRemainingTimeInMillis() - shutdownMarginMs));
      const total: SenderRunResult = { attempted: 0, delivered: 0, waiting: 0, deferred: 0, failed: [] };
      let pass = [...jobIds];
      for (let round = 0; round < maxPasses && pass.length > 0 && !signal.aborted; round++) {
        const again = new Set<string>();
        const result = await runCallbackSenderFor(
          {
            ...options.deps,
            log: engineLogger(logger),
            hostBusyDelayMs: 0,
            wake: async (entry) => {
              if (entry.dueAt <= options.deps.clock.now()) again.add(entry.jobId);
            },
          },
          pass,
          { signal },
        );
        total.attempted += result.attempted;
        total.delivered += result.delivered;
        total.waiting += result.waiting;
        total.deferred += result.deferred;
        total.failed.push(...result.failed);
        pass = [...again];
      }
      logger.info('callback sender done', { ...total, failed: total.failed.length });
      if (total.failed.length > 0) {
        throw new CallbackEntriesFailedError(
          `the callbacks of ${total.failed.length} job(s) could not be handled (${total.failed.slice(0, 5).join(', ')}); ` +
            'their outbox entries come due again when their lease ends',
        );
      }
      return { result: total };
    },
  };
}
