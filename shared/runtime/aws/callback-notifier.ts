/**
 * How functions that commit jobs on aws (the api, the step worker, the webhooks and schedules
 * functions, ingest, `opflow --backend aws`) wake the callback sender: a job that ends with a
 * callback brings its outbox entry forward to now, and that write, marked due, is the wake-up (the
 * job table's stream hands it to the callback function). A later time needs no message: the
 * sweeper's minute pass marks entries as they come due (dynamodb-callback-outbox.ts).
 */
import type { DynamoDbCallbackOutbox } from '../../backends/aws/dynamodb-callback-outbox';
import { type CallbackNotifier, createCallbackNotifier } from '../../callbacks/notifier';
import type { Clock } from '../../engine/ports';
import type { Logger } from '../../log/logger';

/** Nothing to send: on aws the outbox write itself reaches the sender through the table's stream. */
export async function wakeThroughStream(): Promise<void> {}

/** The notifier of a function that commits jobs. */
export function awsCallbackNotifier(options: {
  outbox: DynamoDbCallbackOutbox;
  clock: Clock;
  log?: Logger | undefined;
}): CallbackNotifier {
  return createCallbackNotifier({
    outbox: options.outbox,
    wake: wakeThroughStream,
    clock: options.clock,
    log: options.log,
  });
}
