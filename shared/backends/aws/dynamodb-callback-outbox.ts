/**
 * The callback outbox on the job table: one item per job with a callback still to deliver, in one
 * partition `CBQ` sorted by due time (`<13-digit ms>#<jobId>`), so the due entries are one Query
 * with a key condition, no Scan and no index. The item under `CBJOB#<jobId>` says where the job's
 * entry is now, so `add` replaces it. Claims are transactions conditional on the entry still being
 * where the claimer saw it.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { CallbackOutbox, CallbackOutboxEntry } from '../../engine/callback-ports';
import { sortableTime } from './table';

export const callbackOutboxPartition = 'CBQ';

function entryKey(entry: CallbackOutboxEntry): { PK: string; SK: string } {
  return { PK: callbackOutboxPartition, SK: `${sortableTime(entry.dueAt)}#${entry.jobId}` };
}

function pointerKey(jobId: string): { PK: string; SK: string } {
  return { PK: `CBJOB#${jobId}`, SK: 'CBJOB' };
}

function isCancelled(error: unknown): boolean {
  return (
    error instanceof TransactionCanceledException ||
    (error as { name?: string }).name === 'TransactionCanceledException'
  );
}

export class DynamoDbCallbackOutbox implements CallbackOutbox {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(jobId: string, dueAt: number): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const pointer = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: pointerKey(jobId), ConsistentRead: true }),
      );
      const current = pointer.Item?.dueAt as number | undefined;
      const next = { jobId, dueAt: Math.floor(dueAt) };
      try {
        await this.client.send(
          new TransactWriteCommand({
            TransactItems: [
              ...(current === undefined || current === next.dueAt
                ? []
                : [{ Delete: { TableName: this.tableName, Key: entryKey({ jobId, dueAt: current }) } }]),
              {
                Put: {
                  TableName: this.tableName,
                  Item: { ...pointerKey(jobId), dueAt: next.dueAt },
                  ConditionExpression: current === undefined ? 'attribute_not_exists(PK)' : 'dueAt = :seen',
                  ...(current === undefined ? {} : { ExpressionAttributeValues: { ':seen': current } }),
                },
              },
              ...(current === next.dueAt
                ? []
                : [
                    {
                      Put: {
                        TableName: this.tableName,
                        Item: { ...entryKey(next), jobId, dueAt: next.dueAt },
                      },
                    },
                  ]),
            ],
          }),
        );
        return;
      } catch (error) {
        if (!isCancelled(error)) throw error;
      }
    }
    throw new Error(`the callback outbox entry of job ${jobId} keeps changing`);
  }

  async due(now: number, limit: number): Promise<CallbackOutboxEntry[]> {
    const answer = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'PK = :pk AND SK <= :until',
        ExpressionAttributeValues: { ':pk': callbackOutboxPartition, ':until': `${sortableTime(now)}#~` },
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return (answer.Items ?? []).map((item) => ({ jobId: String(item.jobId), dueAt: Number(item.dueAt) }));
  }

  async earliest(): Promise<CallbackOutboxEntry | undefined> {
    const answer = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': callbackOutboxPartition },
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const item = answer.Items?.[0];
    return item && { jobId: String(item.jobId), dueAt: Number(item.dueAt) };
  }

  async entryOf(jobId: string): Promise<CallbackOutboxEntry | undefined> {
    const pointer = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: pointerKey(jobId), ConsistentRead: true }),
    );
    const dueAt = pointer.Item?.dueAt as number | undefined;
    return dueAt === undefined ? undefined : { jobId, dueAt };
  }

  async move(entry: CallbackOutboxEntry, nextDueAt: number): Promise<boolean> {
    const next = { jobId: entry.jobId, dueAt: Math.floor(nextDueAt) };
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.tableName,
                Key: entryKey(entry),
                ConditionExpression: 'attribute_exists(PK)',
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: { ...pointerKey(entry.jobId), dueAt: next.dueAt },
                ConditionExpression: 'dueAt = :seen',
                ExpressionAttributeValues: { ':seen': Math.floor(entry.dueAt) },
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: { ...entryKey(next), jobId: next.jobId, dueAt: next.dueAt },
              },
            },
          ],
        }),
      );
      return true;
    } catch (error) {
      if (isCancelled(error)) return false;
      throw error;
    }
  }

  async remove(entry: CallbackOutboxEntry): Promise<void> {
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: this.tableName, Key: entryKey(entry) } },
            {
              Delete: {
                TableName: this.tableName,
                Key: pointerKey(entry.jobId),
                ConditionExpression: 'dueAt = :seen',
                ExpressionAttributeValues: { ':seen': Math.floor(entry.dueAt) },
              },
            },
          ],
        }),
      );
    } catch (error) {
      if (!isCancelled(error)) throw error;
      // Moved by someone else meanwhile: leave their entry; drop only a stray entry item.
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: entryKey(entry) }));
    }
  }
}
