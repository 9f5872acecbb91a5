/**
 * The AWS SDK floor of a cold import (scripts/bundle-sizes.ts): the DynamoDB document client and the
 * SQS client, which every opflow function but the callback sender builds, and nothing else. Built
 * as the functions are (so tree-shaken the same way), its cold import is what any function that
 * reads jobs from DynamoDB pays before its own code: the part of the 2× goal the SDK takes.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

export const handler = async (event: { table: string; queueUrl: string }) => {
  const documents = DynamoDBDocumentClient.from(new DynamoDBClient({}));
  const found = await documents.send(
    new GetCommand({ TableName: event.table, Key: { pk: 'JOB#1', sk: 'JOB' } }),
  );
  await new SQSClient({}).send(
    new SendMessageCommand({ QueueUrl: event.queueUrl, MessageBody: JSON.stringify(found.Item ?? {}) }),
  );
  return {};
};
