/**
 * The contract of the callback outbox (shared/engine/callback-ports.ts), run against both
 * backends by callback-outbox.*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { CallbackOutbox } from '../../shared/engine/callback-ports';

export function describeCallbackOutboxContract(name: string, make: () => Promise<CallbackOutbox>): void {
  describe(`${name} (callback outbox contract)`, () => {
    it('lists due entries earliest first, and only those due', async () => {
      const outbox = await make();
      await outbox.add('job-b', 2_000);
      await outbox.add('job-a', 1_000);
      await outbox.add('job-c', 9_000);
      expect(await outbox.due(5_000, 10)).toEqual([
        { jobId: 'job-a', dueAt: 1_000 },
        { jobId: 'job-b', dueAt: 2_000 },
      ]);
      expect(await outbox.due(5_000, 1)).toEqual([{ jobId: 'job-a', dueAt: 1_000 }]);
    });

    it('names the earliest entry, due or not, and the entry of one job', async () => {
      const outbox = await make();
      expect(await outbox.earliest()).toBeUndefined();
      await outbox.add('job-b', 20_000);
      await outbox.add('job-a', 9_000);
      expect(await outbox.earliest()).toEqual({ jobId: 'job-a', dueAt: 9_000 });
      expect(await outbox.entryOf('job-b')).toEqual({ jobId: 'job-b', dueAt: 20_000 });
      expect(await outbox.entryOf('job-z')).toBeUndefined();
      await outbox.move({ jobId: 'job-a', dueAt: 9_000 }, 30_000);
      expect(await outbox.earliest()).toEqual({ jobId: 'job-b', dueAt: 20_000 });
      expect(await outbox.entryOf('job-a')).toEqual({ jobId: 'job-a', dueAt: 30_000 });
    });

    it('add moves an existing entry instead of adding a second one', async () => {
      const outbox = await make();
      await outbox.add('job-a', 1_000);
      await outbox.add('job-a', 3_000);
      expect(await outbox.due(10_000, 10)).toEqual([{ jobId: 'job-a', dueAt: 3_000 }]);
    });

    it('move succeeds once for an entry seen at one due time (a claim)', async () => {
      const outbox = await make();
      await outbox.add('job-a', 1_000);
      const [seen] = await outbox.due(1_000, 10);
      const claims = await Promise.all([outbox.move(seen!, 61_000), outbox.move(seen!, 62_000)]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await outbox.due(1_000, 10)).toEqual([]);
      const [moved] = await outbox.due(100_000, 10);
      expect([61_000, 62_000]).toContain(moved?.dueAt);
      expect(await outbox.move(seen!, 5_000)).toBe(false);
    });

    it('remove takes the entry away only if it is still where it was seen', async () => {
      const outbox = await make();
      await outbox.add('job-a', 1_000);
      await outbox.remove({ jobId: 'job-a', dueAt: 999 });
      expect(await outbox.due(1_000, 10)).toHaveLength(1);
      await outbox.remove({ jobId: 'job-a', dueAt: 1_000 });
      expect(await outbox.due(1_000_000, 10)).toEqual([]);
      // And it can come back (a resend).
      await outbox.add('job-a', 2_000);
      expect(await outbox.due(2_000, 10)).toEqual([{ jobId: 'job-a', dueAt: 2_000 }]);
    });
  });
}
