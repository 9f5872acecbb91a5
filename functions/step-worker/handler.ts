/**
 * Lambda `step-worker`, triggered by the work queue: one engine step per record, failed records
 * reported back for redelivery (shared/runtime/lambda/step-worker.ts holds the logic).
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createLambdaRuntime } from '../../shared/runtime/lambda/runtime';
import { createStepWorker } from '../../shared/runtime/lambda/step-worker';

// Once per instance: clients and caches live across invocations.
const runtime = createLambdaRuntime();
// Parked jobs (admission) are listed from the job store's `WAIT#` partitions.
const worker = createStepWorker({ ...runtime, parked: runtime.pipeline.aws.store });

export function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  return runtime.settle(worker.handle(event, context));
}
