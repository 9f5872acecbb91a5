/**
 * The callback outbox on the job table: one item per job with a callback still to deliver, in one
 * partition `CBQ` sorted by due time (`<13-digit ms>#<jobId>`), so the due entries are one Query
 * with a key condition, no Scan and no index. The item under `CBJOB#<jobId>` says where the job's
 * entry is now, so `add` replaces it. Claims are transactions conditional on the entry still being
 * where the claimer saw it.
 *
 * An entry item written due (its `dueAt` at or before the writer's clock) carries `due: true`: the
 * job table's stream hands exactly those to the callback function (a filtered event source), so a
 * job that ends wakes the sender, while a claim's lease or a later retry (not due) invokes nothing.
 * `announceDue` marks the entries that came due since (the sweeper's minute pass), one stream record
 * each, so a retry, a recheck or an entry whose sender died is delivered when its time comes.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { CallbackOutbox, CallbackOutboxEntry } from '../../engine/callback-ports';
import { sortableTime } from './table';

export const callbackOutboxPartition = 'CBQ';

/** The attribute of an entry item written due, or announced due since (what the stream filter matches). */
export const callbackDueAttribute = 'due';

/** Entries `announceDue` marks in one call at most (a larger backlog is the next minute's). */
const announceLimit = 200;

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
    private readonly now: () => number = Date.now,
  ) {}

  /** An entry item as stored: due when written (at or before this clock) says so to the stream. */
  private entryItem(entry: CallbackOutboxEntry): Record<string, unknown> {
    return {
      ...entryKey(entry),
      jobId: entry.jobId,
      dueAt: entry.dueAt,
      ...(entry.dueAt <= this.now() ? { [callbackDueAttribute]: true } : {}),
    };
  }

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
                        Item: this.entryItem(next),
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
                Item: this.entryItem(next),
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

  /**
   * Marks every entry due at `now` (up to 200 a call, earliest first), whether or not it was marked
   * before: each mark is one stream record that wakes the callback function, so an entry whose
   * delivery failed is tried again each minute it stays due. Returns the entries marked.
   */
  async announceDue(now: number): Promise<number> {
    const entries = await this.due(now, announceLimit);
    let announced = 0;
    for (const entry of entries) {
      try {
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: entryKey(entry),
            UpdateExpression: 'SET #due = :due, announcedAt = :now',
            // Only an entry still there: one claimed or removed meanwhile is not brought back.
            ConditionExpression: 'attribute_exists(PK)',
            ExpressionAttributeNames: { '#due': callbackDueAttribute },
            ExpressionAttributeValues: { ':due': true, ':now': now },
          }),
        );
        announced += 1;
      } catch (error) {
        if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
      }
    }
    return announced;
  }
}
