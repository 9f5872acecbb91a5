/**
 * WorkQueue on SQS: `{jobId, version}` messages, delayed by up to 15 minutes (the SQS limit;
 * longer waits rely on the job's `nextRunAt` and the sweeper), sent in batches of ten.
 */
import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { WorkMessage, WorkQueue } from '../../engine/ports';
import { AwsConfigError, WorkQueueSendError } from './errors';
import { formatWorkMessage } from './work-message';

/** SQS holds a message back for at most 900 seconds. */
export const sqsMaxDelayMs = 900_000;
const batchSize = 10;

export interface SqsWorkQueueOptions {
  client: SQSClient;
  queueUrl: string;
  /** Times a batch entry that failed on the SQS side is sent again before giving up (default 2). */
  batchRetries?: number | undefined;
}

/** Whole seconds, rounded up so a message never arrives before it was asked for, and capped. */
export function delaySeconds(delayMs: number): number {
  if (!Number.isFinite(delayMs) || delayMs <= 0) return 0;
  return Math.min(sqsMaxDelayMs / 1000, Math.ceil(delayMs / 1000));
}

export class SqsWorkQueue implements WorkQueue {
  readonly maxDelayMs = sqsMaxDelayMs;
  /** A message keeps the token reserved for its job's call (`tokenAt`): no commit to record it. */
  readonly carriesTokens = true;
  private readonly client: SQSClient;
  private readonly queueUrl: string;
  private readonly batchRetries: number;

  constructor(options: SqsWorkQueueOptions) {
    if (!options.queueUrl) throw new AwsConfigError('SqsWorkQueue needs a queue URL');
    this.client = options.client;
    this.queueUrl = options.queueUrl;
    this.batchRetries = options.batchRetries ?? 2;
  }

  async send(message: WorkMessage, delayMs: number): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: formatWorkMessage(message),
        DelaySeconds: delaySeconds(delayMs),
      }),
    );
  }

  /**
   * Send many messages, ten per request. Entries SQS rejects for its own reasons are sent again
   * (twice by default); entries still failing after that, or rejected as the sender's fault, end
   * in one WorkQueueSendError naming them. Messages that went through stay sent.
   */
  async sendBatch(messages: { message: WorkMessage; delayMs: number }[]): Promise<void> {
    const failed: WorkQueueSendError['failed'] = [];
    for (let start = 0; start < messages.length; start += batchSize) {
      let pending = messages.slice(start, start + batchSize);
      for (let attempt = 0; pending.length > 0; attempt++) {
        const answer = await this.client.send(
          new SendMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: pending.map((entry, index) => ({
              Id: String(index),
              MessageBody: formatWorkMessage(entry.message),
              DelaySeconds: delaySeconds(entry.delayMs),
            })),
          }),
        );
        const retry: typeof pending = [];
        for (const failure of answer.Failed ?? []) {
          const entry = pending[Number(failure.Id)];
          if (!entry) continue;
          if (!failure.SenderFault && attempt < this.batchRetries) retry.push(entry);
          else failed.push({ ...entry.message, code: failure.Code ?? 'Unknown' });
        }
        pending = retry;
      }
    }
    if (failed.length > 0) {
      const names = failed.map((entry) => `${entry.jobId}@${entry.version} (${entry.code})`).join(', ');
      throw new WorkQueueSendError(
        `${failed.length} of ${messages.length} work messages were not sent: ${names}`,
        failed,
      );
    }
  }
}
