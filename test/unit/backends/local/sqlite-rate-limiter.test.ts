/**
 * The SQLite limiter's pacing: held tokens claimed late, together, go one token interval apart, and
 * the line's next tokens come after them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLocalDatabase, SqliteRateLimiter } from '../../../../shared/backends/local';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function limiterOnFile(ratePerSecond: number): SqliteRateLimiter {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-pace-'));
  const db = openLocalDatabase(join(dir, 'opflow.db'));
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return new SqliteRateLimiter(db, { ratePerSecond });
}

describe('SqliteRateLimiter.pace', () => {
  it('spends a token claimed on time at once', async () => {
    const limiter = limiterOnFile(2);
    expect((await limiter.take('k', 0)).granted).toBe(true);
    expect(await limiter.take('k', 0, { reserveWithinMs: 5_000 })).toMatchObject({ retryAtMs: 500 });
    expect(await limiter.pace('k', 500, 500)).toBe(500);
  });

  it('spaces held tokens claimed together after a stall, and the line after them', async () => {
    const limiter = limiterOnFile(2);
    expect((await limiter.take('k', 0)).granted).toBe(true);
    const reserved: number[] = [];
    for (let i = 0; i < 3; i++) {
      const decision = await limiter.take('k', 0, { reserveWithinMs: 5_000 });
      if (!decision.granted && decision.reserved) reserved.push(decision.retryAtMs);
    }
    expect(reserved).toEqual([500, 1_000, 1_500]);
    // The process was busy until 1,400 ms and claims the first two at once, then the third on time.
    expect(await limiter.pace('k', 500, 1_400)).toBe(1_400);
    expect(await limiter.pace('k', 1_000, 1_401)).toBe(1_900);
    expect(await limiter.pace('k', 1_500, 1_500)).toBe(2_400);
    // Each comes back at its paced time, which is its own.
    expect(await limiter.pace('k', 1_900, 1_900)).toBe(1_900);
    expect(await limiter.pace('k', 2_400, 2_401)).toBe(2_401);
    // A new call's token comes an interval after the last paced one.
    const next = await limiter.take('k', 2_450);
    expect(next.granted).toBe(false);
    if (!next.granted) expect(next.retryAtMs).toBeGreaterThanOrEqual(2_900);
  });
});

describe('SqliteRateLimiter: a line written by a clock ahead', () => {
  const hours2 = 2 * 3_600_000;

  function twoClocks(ratePerSecond: number) {
    const dir = mkdtempSync(join(tmpdir(), 'opflow-ahead-'));
    const path = join(dir, 'opflow.db');
    const ahead = openLocalDatabase(path);
    const here = openLocalDatabase(path);
    cleanups.push(() => {
      ahead.close();
      here.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const laneRows = () =>
      here
        .prepare<[], { at: number }>('SELECT at FROM rate_lane ORDER BY at')
        .all()
        .map((row) => row.at);
    return {
      ahead: new SqliteRateLimiter(ahead, { ratePerSecond }),
      here: new SqliteRateLimiter(here, { ratePerSecond }),
      laneRows,
    };
  }

  it('starts the line anew, and drops the tokens the fast clock reserved', async () => {
    const { ahead, here, laneRows } = twoClocks(2);
    const fast = hours2 + 1_000;
    expect((await ahead.take('k', fast)).granted).toBe(true);
    for (let i = 0; i < 4; i++) await ahead.take('k', fast, { reserveWithinMs: 15_000 });
    expect(laneRows()).toEqual([fast + 500, fast + 1_000, fast + 1_500, fast + 2_000]);

    // Followed, the line would hold this process's calls for two hours: it is started anew.
    expect((await here.take('k', 1_000)).granted).toBe(true);
    const reserved = await here.take('k', 1_000, { reserveWithinMs: 15_000 });
    expect(reserved).toEqual({ granted: false, retryAtMs: 1_500, reserved: true });
    // The fast clock's reserved tokens are gone: only this clock's one is in the lane.
    expect(laneRows()).toEqual([1_500]);
  });

  it('never lets a priority call cut in on a token the fast clock reserved', async () => {
    const { ahead, here, laneRows } = twoClocks(2);
    const fast = hours2;
    expect((await ahead.take('k', fast)).granted).toBe(true);
    for (let i = 0; i < 3; i++) await ahead.take('k', fast, { reserveWithinMs: 15_000 });
    // This clock's line is anew, so its next token is free now: nothing to cut in on.
    expect(await here.cutIn('k', 0, 'high-job')).toBeUndefined();
    expect((await here.take('k', 0)).granted).toBe(true);
    // The line is full now (a token just taken): the fast rows are pruned, none is taken over.
    expect(await here.cutIn('k', 10, 'high-job')).toBeUndefined();
    expect(laneRows()).toEqual([]);
    // A token this clock reserved is cut in on as before.
    await here.take('k', 10, { reserveWithinMs: 15_000 });
    await here.take('k', 10, { reserveWithinMs: 15_000 });
    expect(await here.cutIn('k', 20, 'high-job')).toBe(500);
    expect(await here.stillHeld('k', 500, 'batch-job')).toBe(false);
  });
});

describe('SqliteRateLimiter.shareCutIn', () => {
  it("takes over the soonest leader's token the plan allows, from its pace on, once", async () => {
    const limiter = SqliteRateLimiter.inMemory({ ratePerSecond: 5, burst: 1 });
    expect((await limiter.take('k', 0)).granted).toBe(true);
    // Four tokens reserved ahead, 200 ms apart: 200, 400, 600, 800.
    for (let i = 0; i < 4; i++)
      await limiter.take('k', 0, { reserveWithinMs: 15_000, share: { tenant: 'a', jobId: `a${i}` } });
    const plan = (from: number) => ({ takes: (at: number) => at !== 400, from: () => from, before: 600_000 });
    expect(await limiter.shareCutIn('k', 0, 'g1', plan(300))).toBe(600); // 400 is not the plan's
    expect(await limiter.stillHeld('k', 600, 'a2')).toBe(false);
    expect(await limiter.stillHeld('k', 600, 'g1')).toBe(true);
    expect(await limiter.shareCutIn('k', 0, 'g2', plan(0))).toBe(200);
    expect(await limiter.shareCutIn('k', 0, 'g3', plan(0))).toBe(800);
    expect(await limiter.shareCutIn('k', 0, 'g4', plan(0))).toBeUndefined(); // none left
    // A token free now is no one's to take over: the call takes it.
    expect(await limiter.shareCutIn('k', 2_000, 'g5', plan(0))).toBeUndefined();
  });
});
