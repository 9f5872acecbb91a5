// The learned-poll-timing store (PollStatsStore) behaves the same on both backends: SQLite locally,
// DynamoDB (on DynamoDB Local) on aws. Concurrent records lose nothing; a sketch is shared.

import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../scripts/emulators/aws-emulators';
import { DynamoDbPollStats } from '../../shared/backends/aws';
import { openLocalDatabase, SqlitePollStats } from '../../shared/backends/local';
import { conditionalQuantile, type PollStatsStore, pollStatsKey } from '../../shared/engine';

let emulators: AwsEmulators;
beforeAll(async () => {
  emulators = await startAwsEmulators({ secretsManager: false });
}, 120_000);
afterAll(async () => {
  await emulators?.stop();
});

const backends: [string, () => Promise<PollStatsStore>][] = [
  ['SqlitePollStats', async () => new SqlitePollStats(openLocalDatabase(':memory:'))],
  [
    'DynamoDbPollStats',
    async () =>
      new DynamoDbPollStats({
        client: emulators.clients.documents,
        tableName: await emulators.createTable(),
      }),
  ],
];

for (const [name, make] of backends) {
  describe(`${name} (PollStatsStore contract)`, () => {
    it('answers nothing for an operation never seen, then the sketch of what was recorded', async () => {
      const store = await make();
      const key = pollStatsKey('https://connect.patsnap.com', 'ai35-2NoveltyStep2V3');
      expect((await store.load([key])).size).toBe(0);
      for (const ms of [1_000, 1_200, 1_400, 1_600, 1_800]) await store.record(key, ms, ms, 1);
      const sketch = (await store.load([key, 'other'])).get(key);
      expect(sketch?.count).toBe(5);
      const median = conditionalQuantile(sketch!, 0.5)!;
      expect(median).toBeGreaterThan(1_100);
      expect(median).toBeLessThan(1_800);
    });

    it('loses no record when many workers record at once', async () => {
      const store = await make();
      const key = pollStatsKey('http://127.0.0.1:1', 'ai33-2Step2V3');
      await Promise.all(Array.from({ length: 12 }, (_, i) => store.record(key, 0, 1_000 + i * 100, i)));
      expect((await store.load([key])).get(key)?.count).toBe(12);
    });

    it('keeps operations and base URLs apart (a hash of the URL, never the URL)', async () => {
      const store = await make();
      const real = pollStatsKey('https://connect.patsnap.com', 'op');
      const sandbox = pollStatsKey('http://127.0.0.1:8080', 'op');
      expect(real).not.toBe(sandbox);
      expect(real).not.toContain('patsnap');
      await store.record(real, 5_000, 5_000, 1);
      const loaded = await store.load([real, sandbox]);
      expect([...loaded.keys()]).toEqual([real]);
    });
  });
}

describe('DynamoDbPollStats, a record that loses to another worker', () => {
  it('tries again after a wait spread by its injected random, and loses nothing', async () => {
    const tableName = await emulators.createTable();
    const client = emulators.clients.documents;
    const other = new DynamoDbPollStats({ client, tableName });
    const key = pollStatsKey('http://127.0.0.1:1', 'ai35-2NoveltyStep2V3');
    let raced = false;
    // Another worker records between this one's read and its conditional write: the write loses once.
    const racing = {
      send: async (command: object) => {
        if (command instanceof PutCommand && !raced) {
          raced = true;
          await other.record(key, 2_000, 2_000, 1);
        }
        return client.send(command as PutCommand);
      },
    } as unknown as typeof client;
    const waits: number[] = [];
    const store = new DynamoDbPollStats({
      client: racing,
      tableName,
      random: () => 0.25,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    await store.record(key, 1_000, 1_000, 1);
    expect(waits).toEqual([2.5]);
    expect((await store.load([key])).get(key)?.count).toBe(2);
  });
});
