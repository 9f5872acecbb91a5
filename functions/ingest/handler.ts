/**
 * Lambda `ingest`, invoked asynchronously: by the report bucket's event notification for uploads
 * under `inbox/`, by itself to hand its work on, and by the sweeper's minute pass
 * (shared/runtime/lambda/ingest.ts holds the logic). It builds the job side of the engine only
 * (lambda/jobs-runtime.ts): no Open Platform client, no Secrets Manager.
 */
import type { Context } from 'aws-lambda';
import { awsClientConfig } from '../../shared/backends/aws/clients';
import { createS3Client } from '../../shared/backends/aws/s3-client';
import { loadAwsConfig } from '../../shared/runtime/aws/config';
import { createIngestFunction, type IngestRun } from '../../shared/runtime/lambda/ingest';
import { lazyInvoker } from '../../shared/runtime/lambda/ingest-wake';
import { createJobsRuntime } from '../../shared/runtime/lambda/jobs-runtime';

// Once per instance: clients and caches live across invocations. Every invocation reads the inbox,
// so S3 is part of this function's start (the report store shares the client).
const clientConfig = awsClientConfig(loadAwsConfig());
const s3 = createS3Client(clientConfig);
// The Lambda client only when the function hands on to itself: a chunk loaded on first use, off
// every cold start (most invocations record an upload or drive a batch and end).
const handOn = lazyInvoker(clientConfig);
const runtime = createJobsRuntime({ s3 });
const ingest = createIngestFunction({
  runtime,
  s3,
  // Itself, by the name its invocation was given.
  continueWith: (event, functionName) => handOn(functionName, event),
});

export function handler(event: unknown, context: Context): Promise<IngestRun> {
  return runtime.settle(ingest.handle(event, context));
}
