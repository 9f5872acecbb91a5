/**
 * The BatchStore on the job table (docs/concepts/job-table.md): every record of a batch lives in its own
 * partition `BATCH#<batchId>`: the batch (`SK=META`, also listed newest first through the
 * `byBatchKeys` index under `GSI5PK=BATCHES`), its items in order (`ITEM#<seq>`), a marker per item key
 * (`KEY#<itemKey>`, so a key is never stored twice) and the problems of its bad lines
 * (`PROB#<run>#<record>`). A chunk is one TransactWriteItems: the items, their key markers, the
 * problems and the batch's moved cursor, on the condition of its version.
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Batch, BatchItem, BatchPage, BatchProblem, BatchStore } from '../../engine/batch-store';
import { decodeCursor, encodeCursor } from './cursor';
import { queryItems } from './dynamodb-pages';
import { batchListPartition, jobTableIndexes, sortableTime } from './table';

export interface DynamoDbBatchStoreOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
}

const partition = (batchId: string) => `BATCH#${batchId}`;
const seqKey = (seq: number) => `ITEM#${String(seq).padStart(10, '0')}`;

/**
 * The attributes of a batch's `META` item that `byBatchKeys` reads (the batches newest first under
 * `BATCHES`) and the `tenant` the listing filters on. scripts/migrate-aws.ts sets them on items
 * written before them.
 */
export function batchIndexAttributes(batch: Batch): Record<string, string> {
  return {
    GSI5PK: batchListPartition,
    GSI5SK: `${sortableTime(batch.createdAt)}#${batch.id}`,
    tenant: batch.tenant,
  };
}

/** A batch's `META` item as stored (also written with a job: `DynamoDbJobStore.commitWithBatch`). */
export function batchMetaItem(batch: Batch) {
  return {
    PK: partition(batch.id),
    SK: 'META',
    ...batchIndexAttributes(batch),
    version: batch.version,
    body: JSON.stringify(batch),
  };
}

function isCancelled(error: unknown): boolean {
  return (
    error instanceof TransactionCanceledException ||
    error instanceof ConditionalCheckFailedException ||
    ['TransactionCanceledException', 'ConditionalCheckFailedException'].includes(
      (error as { name?: string }).name ?? '',
    )
  );
}

export class DynamoDbBatchStore implements BatchStore {
  /** 1 batch write + 2 writes per item ≤ 100 operations per transaction. */
  readonly maxChunkItems = 49;
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(options: DynamoDbBatchStoreOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  private batchItem(batch: Batch) {
    return batchMetaItem(batch);
  }

  async create(batch: Batch): Promise<{ batch: Batch; created: boolean }> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.batchItem(batch),
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
      return { batch, created: true };
    } catch (error) {
      if (!isCancelled(error)) throw error;
      const existing = await this.get(batch.id);
      if (!existing) throw new Error(`batch ${batch.id} vanished while being created`);
      return { batch: existing, created: false };
    }
  }

  async get(id: string): Promise<Batch | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { PK: partition(id), SK: 'META' },
        ConsistentRead: true,
      }),
    );
    return Item ? (JSON.parse(String(Item.body)) as Batch) : undefined;
  }

  async commit(batch: Batch, expectedVersion: number): Promise<boolean> {
    if (batch.version !== expectedVersion + 1)
      throw new RangeError(`batch ${batch.id}: a commit must raise the version by one`);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.batchItem(batch),
          ConditionExpression: 'version = :expected',
          ExpressionAttributeValues: { ':expected': expectedVersion },
        }),
      );
      return true;
    } catch (error) {
      if (isCancelled(error)) return false;
      throw error;
    }
  }

  async list(query: { tenant?: string; limit?: number; cursor?: string }): Promise<BatchPage> {
    const limit = Math.max(1, Math.min(query.limit ?? 50, 500));
    // The index holds keys and tenant only: the page's batches are then read whole (one BatchGet).
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, 'all');
    const found = await queryItems(
      this.client,
      {
        TableName: this.tableName,
        IndexName: jobTableIndexes.byBatchKeys,
        KeyConditionExpression: after === undefined ? 'GSI5PK = :p' : 'GSI5PK = :p AND GSI5SK < :after',
        ...(query.tenant === undefined ? {} : { FilterExpression: 'tenant = :tenant' }),
        ExpressionAttributeValues: {
          ':p': batchListPartition,
          ...(after === undefined ? {} : { ':after': after }),
          ...(query.tenant === undefined ? {} : { ':tenant': query.tenant }),
        },
        ScanIndexForward: false,
        Limit: query.tenant === undefined ? limit + 1 : Math.max(100, 4 * (limit + 1)),
      },
      limit + 1,
    );
    const keys = found.map((item) => ({
      sortKey: String(item.GSI5SK),
      batchId: String(item.PK).slice('BATCH#'.length),
    }));
    const shown = keys.slice(0, limit);
    const byId = new Map<string, Batch>();
    for (let from = 0; from < shown.length; from += 100) {
      let request: Record<string, { Keys: Record<string, unknown>[]; ConsistentRead: boolean }> | undefined =
        {
          [this.tableName]: {
            Keys: shown.slice(from, from + 100).map((key) => ({ PK: partition(key.batchId), SK: 'META' })),
            ConsistentRead: true,
          },
        };
      while (request && Object.keys(request).length > 0) {
        const answer = await this.client.send(new BatchGetCommand({ RequestItems: request }));
        for (const item of answer.Responses?.[this.tableName] ?? []) {
          const batch = JSON.parse(String(item.body)) as Batch;
          byId.set(batch.id, batch);
        }
        request = answer.UnprocessedKeys as typeof request;
      }
    }
    const batches = shown.flatMap((key) => byId.get(key.batchId) ?? []);
    const last = shown.at(-1);
    return keys.length > limit && last ? { batches, cursor: encodeCursor('all', last.sortKey) } : { batches };
  }

  async existingKeys(batchId: string, keys: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    const unique = [...new Set(keys)];
    for (let from = 0; from < unique.length; from += 100) {
      let request: Record<string, { Keys: Record<string, unknown>[] }> | undefined = {
        [this.tableName]: {
          Keys: unique.slice(from, from + 100).map((key) => ({ PK: partition(batchId), SK: `KEY#${key}` })),
        },
      };
      while (request && Object.keys(request).length > 0) {
        const answer = await this.client.send(new BatchGetCommand({ RequestItems: request }));
        for (const item of answer.Responses?.[this.tableName] ?? [])
          found.add(String(item.SK).slice('KEY#'.length));
        request = answer.UnprocessedKeys as typeof request;
      }
    }
    return found;
  }

  async commitChunk(
    batch: Batch,
    expectedVersion: number,
    items: readonly BatchItem[],
    problems: readonly BatchProblem[],
  ): Promise<boolean> {
    if (batch.version !== expectedVersion + 1)
      throw new RangeError(`batch ${batch.id}: a commit must raise the version by one`);
    const writes: Record<string, unknown>[] = [
      {
        Put: {
          TableName: this.tableName,
          Item: this.batchItem(batch),
          ConditionExpression: 'version = :expected',
          ExpressionAttributeValues: { ':expected': expectedVersion },
        },
      },
    ];
    for (const item of items) {
      writes.push({
        Put: {
          TableName: this.tableName,
          Item: { PK: partition(batch.id), SK: seqKey(item.seq), body: JSON.stringify(item) },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      });
      writes.push({
        Put: {
          TableName: this.tableName,
          Item: { PK: partition(batch.id), SK: `KEY#${item.key}`, seq: item.seq },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      });
    }
    for (const problem of problems) {
      writes.push({
        Put: {
          TableName: this.tableName,
          Item: {
            PK: partition(batch.id),
            SK: `PROB#${String(problem.run).padStart(6, '0')}#${String(problem.record).padStart(10, '0')}`,
            body: JSON.stringify(problem),
          },
        },
      });
    }
    if (writes.length > 100)
      throw new RangeError(`a chunk of ${items.length} items and ${problems.length} problems is too large`);
    try {
      // biome-ignore lint/suspicious/noExplicitAny: the document client's transaction item type is a union
      await this.client.send(new TransactWriteCommand({ TransactItems: writes as any }));
      return true;
    } catch (error) {
      if (isCancelled(error)) return false;
      throw error;
    }
  }

  async listItems(batchId: string, fromSeq: number, limit: number): Promise<BatchItem[]> {
    const items = await queryItems(
      this.client,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'PK = :p AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':p': partition(batchId), ':from': seqKey(fromSeq), ':to': 'ITEM#~' },
        ConsistentRead: true,
        Limit: Math.max(1, limit),
      },
      limit,
    );
    return items.map((item) => JSON.parse(String(item.body)) as BatchItem);
  }

  async listProblems(batchId: string, run: number): Promise<BatchProblem[]> {
    const items = await queryItems(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'PK = :p AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: {
        ':p': partition(batchId),
        ':prefix': `PROB#${String(run).padStart(6, '0')}#`,
      },
      ConsistentRead: true,
    });
    return items.map((item) => JSON.parse(String(item.body)) as BatchProblem);
  }
}
