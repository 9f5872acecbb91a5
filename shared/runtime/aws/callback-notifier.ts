/**
 * How functions that commit jobs on aws (the api, the step worker, the schedules function,
 * `opflow --backend aws`) wake the callback sender: a message on the callback queue
 * (`OPFLOW_CALLBACK_QUEUE_URL`) when a job with a callback is created (for its recheck) and when
 * it ends (at once). Without the variable, nothing is sent.
 */
import type { DynamoDbCallbackOutbox } from '../../backends/aws/dynamodb-callback-outbox';
import { SqsCallbackQueue } from '../../backends/aws/sqs-callback-queue';
import { type CallbackNotifier, createCallbackNotifier } from '../../callbacks/notifier';
import type { Clock } from '../../engine/ports';
import type { Logger } from '../../log/logger';

export const callbackQueueVariable = 'OPFLOW_CALLBACK_QUEUE_URL';

type Env = Readonly<Record<string, string | undefined>>;
type SqsClient = ConstructorParameters<typeof SqsCallbackQueue>[0];

/** The callback queue of the stack, when this function was given it. */
export function awsCallbackQueue(sqs: SqsClient, env: Env = process.env): SqsCallbackQueue | undefined {
  const url = env[callbackQueueVariable]?.trim();
  return url ? new SqsCallbackQueue(sqs, url) : undefined;
}

/** The notifier of a function that commits jobs; undefined when the stack gave it no callback queue. */
export function awsCallbackNotifier(options: {
  outbox: DynamoDbCallbackOutbox;
  sqs: SqsClient;
  clock: Clock;
  env?: Env | undefined;
  log?: Logger | undefined;
}): CallbackNotifier | undefined {
  const queue = awsCallbackQueue(options.sqs, options.env);
  if (!queue) return undefined;
  return createCallbackNotifier({
    outbox: options.outbox,
    wake: (entry) => queue.wake(entry),
    clock: options.clock,
    log: options.log,
  });
}
