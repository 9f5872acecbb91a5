// Runs the port contract suite against the aws backend on local emulators: DynamoDB Local for the
// job store and the rate limiter, fauxqs for SQS and S3. One set of emulators for the whole file;
// a fresh table, queue or bucket per test.
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { request } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../scripts/emulators/aws-emulators';
import {
  DynamoDbJobStore,
  DynamoDbRateLimiter,
  parseWorkMessage,
  S3ReportStore,
  SqsWorkQueue,
} from '../../shared/backends/aws';
import type { WorkMessage } from '../../shared/engine/ports';
import {
  describeJobStoreContract,
  describeRateLimiterContract,
  describeReportStoreContract,
  describeSharedRateLimiterContract,
  describeWorkQueueContract,
} from './ports.contract';

let emulators: AwsEmulators;
beforeAll(async () => {
  emulators = await startAwsEmulators({ secretsManager: false });
});
afterAll(async () => {
  await emulators?.stop();
});

describeJobStoreContract('DynamoDbJobStore', async () => {
  const tableName = await emulators.createTable();
  const reports = new S3ReportStore({ client: emulators.clients.s3, bucket: emulators.createBucket() });
  return { subject: new DynamoDbJobStore({ client: emulators.clients.documents, tableName, reports }) };
});

describeWorkQueueContract('SqsWorkQueue', async () => {
  const { queueUrl } = emulators.createQueue();
  const sqs = emulators.clients.sqs;
  return {
    subject: {
      queue: new SqsWorkQueue({ client: sqs, queueUrl }),
      drain: async () => {
        const messages: WorkMessage[] = [];
        for (;;) {
          const answer = await sqs.send(
            new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
          );
          const received = answer.Messages ?? [];
          if (received.length === 0) return messages;
          for (const message of received) messages.push(parseWorkMessage(message.Body ?? ''));
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: received.map((message, index) => ({
                Id: String(index),
                ReceiptHandle: message.ReceiptHandle,
              })),
            }),
          );
        }
      },
    },
  };
});

describeReportStoreContract('S3ReportStore', async () => ({
  subject: {
    reports: new S3ReportStore({ client: emulators.clients.s3, bucket: emulators.createBucket() }),
    readLink: async (link) => {
      const answer = await request(link);
      if (answer.statusCode !== 200)
        throw new Error(`GET of the presigned link answered ${answer.statusCode}`);
      return new Uint8Array(await answer.body.arrayBuffer());
    },
  },
}));

describeRateLimiterContract('DynamoDbRateLimiter', async ({ ratePerSecond, burst }) => {
  const tableName = await emulators.createTable();
  return {
    subject: new DynamoDbRateLimiter({
      client: emulators.clients.documents,
      tableName,
      ratePerSecond,
      burst,
    }),
  };
});

// Two limiters on one table, as two Lambda functions have.
describeSharedRateLimiterContract('DynamoDbRateLimiter', async ({ ratePerSecond, burst }) => {
  const tableName = await emulators.createTable();
  const limiter = () =>
    new DynamoDbRateLimiter({ client: emulators.clients.documents, tableName, ratePerSecond, burst });
  return { subject: [limiter(), limiter()] as const };
});
