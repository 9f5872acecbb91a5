/**
 * Lambda `ingest`, triggered by the ingest queue: S3 events of uploads under `inbox/` and the
 * function's own continuations (shared/runtime/lambda/ingest.ts holds the logic). It builds the job
 * side of the engine only (lambda/jobs-runtime.ts): no Open Platform client, no Secrets Manager.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { awsClientConfig } from '../../shared/backends/aws/clients';
import { createS3Client } from '../../shared/backends/aws/s3-client';
import { loadAwsConfig } from '../../shared/runtime/aws/config';
import { createIngestFunction } from '../../shared/runtime/lambda/ingest';
import { createJobsRuntime } from '../../shared/runtime/lambda/jobs-runtime';

// Once per instance: clients and caches live across invocations. Every invocation reads the inbox,
// so S3 is part of this function's start (the report store shares the client).
const s3 = createS3Client(awsClientConfig(loadAwsConfig()));
const runtime = createJobsRuntime({ s3 });
const ingest = createIngestFunction({ runtime, s3 });

export function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  return runtime.settle(ingest.handle(event, context));
}
