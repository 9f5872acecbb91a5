/**
 * How uploads reach the ingest function on this machine, as the template's rules say (ingest-rules.ts):
 * its on-failure queue, its asynchronous invocations (async-invoke.ts), the Lambda Invoke endpoint that
 * takes its own and the sweeper's invocations, and S3's notification (a proxy in front of fauxqs' S3).
 * Used by the e2e harness and aws-local; the returned environment points the functions at them.
 */
import { ingestVariables } from '../../shared/backends/aws/ingest-variables';
import type { AwsEmulators } from '../emulators/aws-emulators';
import { type AsyncHandler, AsyncInvoker } from './async-invoke';
import type { IngestDeliveryRules } from './ingest-rules';
import { type LambdaEndpoint, startLambdaEndpoint } from './lambda-endpoint';
import { type S3NotificationProxy, startS3NotificationProxy } from './s3-notification-proxy';

export interface IngestDelivery {
  invoker: AsyncInvoker;
  deadLetterQueue: { name: string; url: string };
  proxy: S3NotificationProxy;
  lambda: LambdaEndpoint;
  /** AWS_ENDPOINT_URL_S3 (the proxy), AWS_ENDPOINT_URL_LAMBDA, OPFLOW_INGEST_FUNCTION_NAME, OPFLOW_INGEST_DLQ_URL. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startIngestDelivery(
  emulators: AwsEmulators,
  bucket: string,
  rules: IngestDeliveryRules,
  handler: AsyncHandler,
): Promise<IngestDelivery> {
  const dlq = emulators.createQueue();
  const invoker = new AsyncInvoker(handler, {
    functionName: rules.functionName,
    timeoutMs: rules.timeoutMs,
    recursiveLoop: rules.recursiveLoop,
    retryAttempts: rules.retryAttempts,
    maxEventAgeSeconds: rules.maxEventAgeSeconds,
    onFailure: rules.onFailureQueueId ? { sqs: emulators.clients.sqs, queueUrl: dlq.queueUrl } : undefined,
  });
  const lambda = await startLambdaEndpoint(new Map([[rules.functionName, invoker]]));
  const proxy = await startS3NotificationProxy({
    target: emulators.environment()['AWS_ENDPOINT_URL_S3']!,
    notifications: [
      {
        bucket,
        prefix: rules.notification.prefix,
        suffix: rules.notification.suffix,
        deliver: (event) => invoker.enqueue(event),
      },
    ],
  });
  return {
    invoker,
    deadLetterQueue: { name: dlq.queueName, url: dlq.queueUrl },
    proxy,
    lambda,
    env: {
      AWS_ENDPOINT_URL_S3: proxy.url,
      AWS_ENDPOINT_URL_LAMBDA: lambda.url,
      [ingestVariables.functionName]: rules.functionName,
      [ingestVariables.deadLetterQueueUrl]: dlq.queueUrl,
    },
    async close() {
      await Promise.allSettled([proxy.close(), lambda.close()]);
    },
  };
}
