/**
 * How many messages of the ingest queue no function has received yet: what `opflow --backend aws
 * ingest` reads to say that nothing consumes the queue. A module of its own so that no Lambda bundle
 * (which never asks) carries the GetQueueAttributes command its role may not send.
 */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** Messages of the ingest queue that no function has received yet (SQS's approximate count). */
export async function unreadIngestMessages(sqs: SQSClient, queueUrl: string): Promise<number> {
  const answer = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(answer.Attributes?.ApproximateNumberOfMessages ?? 0);
}
