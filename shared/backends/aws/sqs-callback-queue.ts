/**
 * The callback queue on SQS: a message `{jobId, dueAt}` asks the callback sender to look at a job's
 * outbox entry (shared/engine/callback-ports.ts) at `dueAt`. The outbox stays the truth; a message
 * only wakes the sender. SQS holds a message back at most 900 s: a later time is reached in hops
 * (the sender, woken early, sends the message again for what is left).
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import * as z from 'zod';
import type { CallbackOutboxEntry } from '../../engine/callback-ports';
import { AwsConfigError } from './errors';
import { delaySeconds } from './sqs-work-queue';

export const callbackWakeSchema = z.strictObject({
  jobId: z.string().min(1).max(200),
  dueAt: z.number().int().nonnegative(),
});

export type CallbackWake = z.infer<typeof callbackWakeSchema>;

/** Reads a message body; undefined (and the reason) when it is not a wake-up. */
export function parseCallbackWake(body: string): { wake?: CallbackWake; problem?: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { problem: 'the body is not JSON' };
  }
  const parsed = callbackWakeSchema.safeParse(json);
  if (parsed.success) return { wake: parsed.data };
  const issue = parsed.error.issues[0];
  return { problem: `${issue?.path.join('.') || 'body'}: ${issue?.message}` };
}

export class SqsCallbackQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
    private readonly now: () => number = Date.now,
  ) {
    if (!queueUrl) throw new AwsConfigError('SqsCallbackQueue needs a queue URL');
  }

  /** A message that arrives at `entry.dueAt`, or in 900 s when that is later. */
  async wake(entry: CallbackOutboxEntry): Promise<void> {
    const message: CallbackWake = { jobId: entry.jobId, dueAt: Math.floor(entry.dueAt) };
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        DelaySeconds: delaySeconds(entry.dueAt - this.now()),
      }),
    );
  }
}
