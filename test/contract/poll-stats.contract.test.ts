// The learned-poll-timing store (PollStatsStore) behaves the same on both backends: SQLite locally,
// DynamoDB (on DynamoDB Local) on aws. Concurrent records lose nothing; a sketch is shared.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../scripts/emulators/aws-emulators';
import { DynamoDbPollStats } from '../../shared/backends/aws';
import { openLocalDatabase, SqlitePollStats } from '../../shared/backends/local';
import {
  conditionalQuantile,
  keptRunning,
  type PollStatsStore,
  pollStatsKey,
  runningTaskId,
} from '../../shared/engine';

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

    it("keeps a running task's entry while it can change aims, replaces it, and drops it when the task finishes", async () => {
      const store = await make();
      const key = pollStatsKey('http://127.0.0.1:2', 'ai35-8NoveltySearchAgentResult');
      const a = runningTaskId('job-a', 'agent-result');
      const b = runningTaskId('job-b', 'agent-result');
      expect(a).not.toBe(b);
      expect(await store.recordRunning(key, a, 60_000, 1_000)).toBe(true);
      expect(await store.recordRunning(key, a, 90_000, 2_000)).toBe(true);
      // Nothing finished yet: a look shorter than the longest seen changes no aim, and is not written.
      expect(await store.recordRunning(key, b, 70_000, 3_000)).toBe(false);
      expect(await store.recordRunning(key, b, 120_000, 4_000)).toBe(true);
      let sketch = (await store.load([key])).get(key);
      expect(sketch?.count).toBe(0);
      expect(sketch?.run?.map(([task, age]) => [task, age])).toEqual([
        [b, 120_000],
        [a, 90_000],
      ]);
      await store.record(key, 90_000, 150_000, 5_000, a);
      sketch = (await store.load([key])).get(key);
      expect(sketch?.count).toBe(1);
      expect(sketch?.run?.map(([task]) => task)).toEqual([b]);
    });

    it('loses no running entry when many workers record at once, and keeps at most keptRunning', async () => {
      const store = await make();
      const key = pollStatsKey('http://127.0.0.1:3', 'op');
      // Nothing finished: a look is written only if longer than all before it, so how many are
      // written depends on the order the workers' writes land in.
      const written = await Promise.all(
        Array.from({ length: keptRunning }, (_, i) =>
          store.recordRunning(key, runningTaskId(`job-${i}`, 'step'), 10_000 * (i + 1), 1_000),
        ),
      );
      const sketch = (await store.load([key])).get(key);
      // Every look answered as written is there (none overwritten by another worker's), the longest too.
      expect(sketch?.run?.length).toBe(written.filter(Boolean).length);
      expect(sketch?.run?.[0]?.[1]).toBe(10_000 * keptRunning);
      for (let i = 0; i < keptRunning + 3; i++)
        await store.recordRunning(key, runningTaskId(`later-${i}`, 'step'), 1_000_000 + i * 1_000, 2_000);
      expect((await store.load([key])).get(key)?.run).toHaveLength(keptRunning);
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
