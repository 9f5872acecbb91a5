/**
 * The callback sender on aws, behind the Lambda `callback-sender`, triggered by the callback queue:
 * each message names a job whose callback may be due (`{jobId, dueAt}`, sent when a job with a
 * callback is created or ends, and by the sender itself for a retry, a recheck or a busy host). The
 * same sender as locally (shared/callbacks/sender.ts) over the DynamoDB outbox and the per-tenant
 * signing secrets; it never polls: with nothing queued it does not run.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { parseCallbackWake } from '../../backends/aws/sqs-callback-queue';
import { type CallbackSenderDeps, runCallbackSenderFor, type SenderRunResult } from '../../callbacks/sender';
import { engineLogger, type Observability } from './observability';

export interface CallbackSenderHandler {
  handle(event: SQSEvent, context: Context): Promise<SQSBatchResponse & { result: SenderRunResult }>;
}

/**
 * A batch of wake-ups: the due entries among their jobs are delivered side by side (8 at once, 2 per
 * host); a record whose job could not be handled is reported failed, so SQS brings it back (and
 * after 5 receives to the dead-letter queue, under an alarm). A record that is not a wake-up is
 * logged and dropped.
 */
export function createCallbackSenderHandler(options: {
  deps: CallbackSenderDeps;
  observability: Observability;
}): CallbackSenderHandler {
  const { logger } = options.observability;
  return {
    async handle(event, context) {
      logger.addContext(context);
      const deps = { ...options.deps, log: engineLogger(logger) };
      const records = new Map<string, string[]>();
      for (const record of event.Records ?? []) {
        const { wake, problem } = parseCallbackWake(record.body);
        if (!wake) {
          logger.error('callback sender: a message that is not a wake-up was dropped', {
            messageId: record.messageId,
            problem,
          });
          continue;
        }
        records.set(wake.jobId, [...(records.get(wake.jobId) ?? []), record.messageId]);
      }
      const result = await runCallbackSenderFor(deps, [...records.keys()]);
      const batchItemFailures = result.failed.flatMap((jobId) =>
        (records.get(jobId) ?? []).map((itemIdentifier) => ({ itemIdentifier })),
      );
      logger.info('callback sender done', { ...result, failed: result.failed.length });
      return { batchItemFailures, result };
    },
  };
}
