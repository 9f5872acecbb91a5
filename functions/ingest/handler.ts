/**
 * Lambda `ingest`, triggered by the ingest queue: S3 events of uploads under `inbox/` and the
 * function's own continuations (shared/runtime/lambda/ingest.ts holds the logic). It builds the job
 * side of the engine only (lambda/jobs-runtime.ts): no Open Platform client, no Secrets Manager.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createIngestFunction } from '../../shared/runtime/lambda/ingest';
import { createJobsRuntime } from '../../shared/runtime/lambda/jobs-runtime';

// Once per instance: clients and caches live across invocations.
const runtime = createJobsRuntime({ functionName: 'ingest' });
const ingest = createIngestFunction({ runtime });

export function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  return runtime.settle(ingest.handle(event, context));
}
