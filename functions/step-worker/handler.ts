/**
 * Lambda `step-worker`, triggered by the work queue: one engine step per record, failed records
 * reported back for redelivery (shared/runtime/aws-step-worker.ts holds the logic).
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createLambdaRuntime } from '../../shared/runtime/aws-lambda';
import { createStepWorker } from '../../shared/runtime/aws-step-worker';

// Once per instance: clients and caches live across invocations.
const worker = createStepWorker(createLambdaRuntime());

export function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  return worker.handle(event, context);
}
