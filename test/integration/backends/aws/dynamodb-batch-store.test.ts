// DynamoDbBatchStore's list on DynamoDB Local: batches newest first through the small byBatchKeys
// index (keys and tenant), read whole with BatchGetItem; tenant filter and cursors across pages.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import { DynamoDbBatchStore } from '../../../../shared/backends/aws';
import type { Batch } from '../../../../shared/engine/batch-store';
import { newBatch } from '../../../../shared/ingest/batch';

const T0 = 1_750_000_000_000;
let emulators: AwsEmulators;

beforeAll(async () => {
  emulators = await startAwsEmulators({ secretsManager: false });
});
afterAll(async () => {
  await emulators?.stop();
});

function batch(id: string, tenant: string, createdAt: number): Batch {
  return newBatch({
    id,
    name: `batch ${id}`,
    tenant,
    workflow: 'novelty-check',
    source: { kind: 'jsonl', uri: `s3://inbox/${id}.jsonl` },
    options: { selection: 'auto', inFlight: 32 },
    now: createdAt,
  });
}

async function pages(store: DynamoDbBatchStore, query: { tenant?: string; limit: number }) {
  const seen: Batch[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ ...query, ...(cursor ? { cursor } : {}) });
    seen.push(page.batches);
    cursor = page.cursor;
  } while (cursor && seen.length < 50);
  return seen;
}

describe('DynamoDbBatchStore.list', () => {
  it('lists batches newest first, whole, by tenant and across pages', async () => {
    const tableName = await emulators.createTable();
    const store = new DynamoDbBatchStore({ client: emulators.clients.documents, tableName });
    const all: Batch[] = [];
    for (let i = 0; i < 11; i++) {
      const created = batch(
        `b-${String(i).padStart(2, '0')}`,
        i % 3 === 0 ? 'acme' : 'globex',
        T0 + i * 1000,
      );
      await store.create(created);
      all.push(created);
    }
    // A batch changed after creation is listed as it is now.
    const moved = { ...all[4]!, status: 'RUNNING' as const, version: 2, updatedAt: T0 + 60_000 };
    expect(await store.commit(moved, 1)).toBe(true);
    all[4] = moved;

    const item = (
      await emulators.clients.documents.send(
        new GetCommand({ TableName: tableName, Key: { PK: 'BATCH#b-04', SK: 'META' } }),
      )
    ).Item;
    expect(item).toMatchObject({ GSI5PK: 'BATCHES', GSI5SK: `${String(T0 + 4000).padStart(13, '0')}#b-04` });
    expect(item).not.toHaveProperty('GSI1PK');

    const newestFirst = [...all].reverse();
    const everything = await pages(store, { limit: 4 });
    expect(everything.map((page) => page.length)).toEqual([4, 4, 3]);
    expect(everything.flat()).toEqual(newestFirst);

    const acme = await pages(store, { tenant: 'acme', limit: 2 });
    expect(acme.flat().map((b) => b.id)).toEqual(['b-09', 'b-06', 'b-03', 'b-00']);
    expect(acme.every((page) => page.length <= 2)).toBe(true);
    expect((await store.list({ tenant: 'initech' })).batches).toEqual([]);
  });
});
