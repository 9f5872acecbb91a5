/**
 * Lambda `callback-sender`, run every minute by a schedule: delivers the signed callbacks of
 * finished jobs and retries them on their schedule (shared/runtime/aws-callbacks.ts).
 */
import type { Context } from 'aws-lambda';
import { callbackSenderDeps, createCallbackSenderHandler } from '../../shared/runtime/aws-callbacks';
import { createLambdaRuntime } from '../../shared/runtime/aws-lambda';

// Once per instance: clients and caches live across invocations.
const runtime = createLambdaRuntime();
const sender = createCallbackSenderHandler({
  deps: callbackSenderDeps(runtime.pipeline),
  observability: runtime.observability,
});

export function handler(event: unknown, context: Context) {
  return sender.handle(event, context);
}
