/**
 * Lambda `step-worker`, triggered by the work queue: one engine step per record, failed records
 * reported back for redelivery (shared/runtime/lambda/step-worker.ts holds the logic).
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { awsClientConfig } from '../../shared/backends/aws/clients';
import { batchEndWake, ingestFunctionName } from '../../shared/runtime/lambda/ingest-wake';
import { createLambdaRuntime } from '../../shared/runtime/lambda/runtime';
import { createStepWorker } from '../../shared/runtime/lambda/step-worker';

// Once per instance: clients and caches live across invocations.
const runtime = createLambdaRuntime();
// Parked jobs (admission) are listed from the job store's `WAIT#` partitions. A job of a batch that
// ends wakes its batch's ingest entry (and the ingest function), when the stack names that function.
const ingestFunction = ingestFunctionName();
const worker = createStepWorker({
  ...runtime,
  parked: runtime.pipeline.aws.store,
  batchEnded: ingestFunction
    ? batchEndWake(
        runtime.pipeline.aws.clients.documents,
        runtime.pipeline.config.tableName,
        awsClientConfig(runtime.pipeline.config),
        ingestFunction,
      )
    : undefined,
});

export function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  return runtime.settle(worker.handle(event, context));
}
