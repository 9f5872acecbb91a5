/**
 * Lambda `ingest`, triggered by the ingest queue: S3 events of uploads under `inbox/` and the
 * function's own continuations (shared/runtime/lambda/ingest.ts holds the logic).
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createIngestFunction } from '../../shared/runtime/lambda/ingest';
import { createLambdaRuntime } from '../../shared/runtime/lambda/runtime';

// Once per instance: clients and caches live across invocations.
const runtime = createLambdaRuntime();
const ingest = createIngestFunction({ runtime });

export function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  return runtime.settle(ingest.handle(event, context));
}
