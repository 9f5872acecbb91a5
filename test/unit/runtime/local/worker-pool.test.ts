// The worker pool over a real SQLite queue, with skipping time: concurrency, due order, retries after
// a throw, the sweeper's timer, and a graceful stop.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LocalDatabase, openLocalDatabase, SqliteWorkQueue } from '../../../../shared/backends/local';
import type { WorkMessage } from '../../../../shared/engine/ports';
import { WorkerPool } from '../../../../shared/runtime/local/worker-pool';
import { ManualClock, skippingTime } from '../../../../shared/runtime/time';

const T0 = Date.UTC(2026, 0, 5, 9);

describe('WorkerPool', () => {
  let dir: string;
  let db: LocalDatabase;
  let clock: ManualClock;
  let queue: SqliteWorkQueue;
  const pools: WorkerPool[] = [];

  const pool = (
    options: Partial<ConstructorParameters<typeof WorkerPool>[0]> &
      Pick<ConstructorParameters<typeof WorkerPool>[0], 'handle'>,
  ) => {
    const created = new WorkerPool({
      queue,
      time: skippingTime(clock),
      concurrency: 2,
      owner: 'test-host/1/abc',
      ...options,
    });
    pools.push(created);
    return created;
  };
  /** Resolves when `check` holds (looking after every macrotask), failing after five real seconds. */
  const until = async (check: () => boolean) => {
    const giveUpAt = Date.now() + 5_000;
    while (!check() && Date.now() < giveUpAt) await new Promise((resolve) => setImmediate(resolve));
    expect(check()).toBe(true);
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-pool-'));
    db = openLocalDatabase(join(dir, 'opflow.db'));
    clock = new ManualClock(T0);
    queue = new SqliteWorkQueue(db, { clock });
  });
  afterEach(async () => {
    for (const created of pools.splice(0)) await created.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs no more steps at once than its concurrency', async () => {
    let running = 0;
    let most = 0;
    let finished = 0;
    const workers = pool({
      concurrency: 3,
      handle: async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        finished += 1;
      },
    });
    for (let i = 0; i < 12; i += 1) await queue.send({ jobId: `j${i}`, version: 1 }, 0);
    workers.start();
    await until(() => finished === 12);
    expect(most).toBe(3);
    expect(queue.size()).toBe(0);
  });

  it('jumps the clock to each due message when idle, taking them in due order', async () => {
    const seen: { jobId: string; at: number }[] = [];
    const workers = pool({
      handle: async (message: WorkMessage) => {
        seen.push({ jobId: message.jobId, at: clock.now() });
      },
    });
    await queue.send({ jobId: 'in-an-hour', version: 1 }, 3_600_000);
    await queue.send({ jobId: 'in-a-minute', version: 1 }, 60_000);
    workers.start();
    await until(() => seen.length === 2);
    expect(seen).toEqual([
      { jobId: 'in-a-minute', at: T0 + 60_000 },
      { jobId: 'in-an-hour', at: T0 + 3_600_000 },
    ]);
  });

  it('gives a message whose step threw back to the queue, and tries again later', async () => {
    const attempts: number[] = [];
    const errors: string[] = [];
    const workers = pool({
      handle: async () => {
        attempts.push(clock.now());
        if (attempts.length < 3) throw new Error(`boom ${attempts.length}`);
      },
      onError: (error) => errors.push((error as Error).message),
    });
    await queue.send({ jobId: 'flaky', version: 1 }, 0);
    workers.start();
    await until(() => attempts.length === 3 && queue.size() === 0);
    expect(errors).toEqual(['boom 1', 'boom 2']);
    // Backoff doubles: one second, then two.
    expect(attempts.map((at) => at - T0)).toEqual([0, 1_000, 3_000]);
  });

  it('sweeps when it starts and then every interval of clock time', async () => {
    const sweeps: number[] = [];
    const workers = pool({
      handle: async () => undefined,
      sweep: async () => {
        sweeps.push(clock.now() - T0);
      },
      sweepIntervalMs: 30_000,
    });
    workers.start();
    await until(() => sweeps.length >= 3);
    expect(sweeps.slice(0, 3)).toEqual([0, 30_000, 60_000]);
  });

  it('takes back at start the leases of a process that is gone', async () => {
    await queue.send({ jobId: 'orphan', version: 1 }, 0);
    queue.claim(T0, 1, 3_600_000, 'test-host-that-is-not-this-one/1/abc');
    const deadOwner = `${(await import('node:os')).hostname()}/2147483646/deadbeef`;
    await queue.send({ jobId: 'orphan-of-dead', version: 1 }, 0);
    queue.claim(T0, 1, 3_600_000, deadOwner);
    const seen: string[] = [];
    const workers = pool({ handle: async (message) => void seen.push(message.jobId) });
    workers.start();
    await until(() => seen.length === 1);
    expect(seen).toEqual(['orphan-of-dead']);
    // The other host's lease still holds: it may be alive.
    expect(clock.now()).toBeLessThan(T0 + 3_600_000);
  });

  it('stops claiming on stop, and waits for the steps in progress', async () => {
    let release: () => void = () => undefined;
    let finished = 0;
    const workers = pool({
      concurrency: 1,
      handle: () =>
        new Promise<void>((resolve) => {
          release = () => {
            finished += 1;
            resolve();
          };
        }),
    });
    await queue.send({ jobId: 'a', version: 1 }, 0);
    await queue.send({ jobId: 'b', version: 1 }, 0);
    workers.start();
    await until(() => workers.active === 1);
    const stopped = workers.stop();
    release();
    await stopped;
    expect(finished).toBe(1);
    expect(queue.size()).toBe(1);
  });

  it('claims nothing while paused for the rate limit, then carries on at the pause end', async () => {
    const seen: { jobId: string; at: number }[] = [];
    let workers: WorkerPool | undefined;
    workers = pool({
      concurrency: 4,
      handle: async (message: WorkMessage) => {
        seen.push({ jobId: message.jobId, at: clock.now() });
        if (message.jobId === 'first') workers?.pauseClaims(clock.now() + 500);
      },
    });
    await queue.send({ jobId: 'first', version: 1 }, 0);
    workers.start();
    await until(() => seen.length === 1);
    await queue.send({ jobId: 'second', version: 1 }, 0);
    workers.wake();
    await until(() => seen.length === 2);
    expect(seen).toEqual([
      { jobId: 'first', at: T0 },
      { jobId: 'second', at: T0 + 500 },
    ]);
  });

  it('refuses a concurrency below one', () => {
    expect(() => pool({ concurrency: 0, handle: async () => undefined })).toThrow(/concurrency/);
  });
});
