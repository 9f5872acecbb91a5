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
