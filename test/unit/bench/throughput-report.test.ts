import { describe, expect, it } from 'vitest';
import { caseCut, cutReason, watchCut } from '../../../bench/throughput-cut';
import { batchFigures, failedText, failuresOf, meetsBatchGoals } from '../../../bench/throughput-report';
import type { Job } from '../../../shared/engine';

/** A job of the bench's case: only what the report reads. */
const job = (id: string, status: Job['status'], kind?: string): Job =>
  ({
    id,
    status,
    ...(kind === undefined
      ? {}
      : { lastError: { step: 'poll', kind, message: 'x', retryable: false, at: 0 } }),
  }) as unknown as Job;

describe('the throughput bench reports a failed case as failed, not as a figure', () => {
  it('counts the jobs that did not succeed by why: failure kind, cancelled, unfinished or missing', () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const jobs = [
      job('a', 'SUCCEEDED'),
      job('b', 'FAILED', 'poll-timeout'),
      job('c', 'FAILED', 'poll-timeout'),
      job('d', 'FAILED', 'timeout'),
      job('e', 'CANCELLED'),
      job('f', 'WAITING'),
    ];
    expect(failuresOf(ids, jobs)).toEqual({ 'poll-timeout': 2, timeout: 1, cancelled: 1, unfinished: 2 });
    expect(failedText(7, failuresOf(ids, jobs), true)).toBe(
      'FAILED 6/7 (2 poll-timeout, 2 unfinished, 1 cancelled, 1 timeout)',
    );
    expect(failuresOf(['a'], jobs)).toEqual({});
    expect(failedText(1, {}, false)).toBeUndefined();
  });

  it('a cell whose jobs failed on a timeout prints no ratio and does not meet the goals, however short its makespan', () => {
    // 30 jobs, 4 failed on a poll timeout: the jobs that ended did so at 0.65 of the bound.
    const failed = batchFigures(
      {
        wallMs: 65_000,
        calls: 400,
        throttled: 0,
        jobs: 30,
        failures: { 'poll-timeout': 4 },
        timedOut: false,
      },
      100_000,
      390,
    );
    expect(failed.ok).toBe(false);
    expect(failed.text).toBe('FAILED 4/30 (4 poll-timeout)');
    expect(failed.text).not.toMatch(/0\.65/);
    expect(meetsBatchGoals(failed)).toBe(false);
    // The bench stopped waiting with every job counted: still failed.
    const waited = batchFigures(
      { wallMs: 65_000, calls: 400, throttled: 0, jobs: 30, failures: {}, timedOut: true },
      100_000,
      390,
    );
    expect(waited.text).toBe('FAILED (wait timed out)');
    expect(meetsBatchGoals(waited)).toBe(false);
  });

  it('a cell whose jobs all succeeded prints its ratios and meets the goals only within them', () => {
    const good = batchFigures(
      { wallMs: 105_000, calls: 400, throttled: 4, jobs: 30, failures: {}, timedOut: false },
      100_000,
      390,
    );
    expect(good).toMatchObject({ ok: true, text: '1.05 1.03 1.0%' });
    expect(meetsBatchGoals(good)).toBe(true);
    const slow = batchFigures(
      { wallMs: 115_000, calls: 400, throttled: 4, jobs: 30, failures: {}, timedOut: false },
      100_000,
      390,
    );
    expect(slow.text).toBe('1.15 1.03 1.0%');
    expect(meetsBatchGoals(slow)).toBe(false);
  });
});

describe('the throughput bench cuts a case by clock time on the virtual clock', () => {
  it('bounds a virtual case by 20 x its bound of clock time, real time only as a far guard', () => {
    const cut = caseCut(true, 19_500);
    expect(cut).toEqual({ clockMs: 390_000, realMs: 30 * 60_000 });
    // A loaded machine: 10 minutes of real time for 40 s of clock time is no cut (the old rule,
    // max(300 s, 8 x bound) of real time, cut here).
    expect(cutReason(cut, { clockMs: 40_000, realMs: 600_000 })).toBeUndefined();
    expect(cutReason(cut, { clockMs: 390_000, realMs: 20_000 })).toBe(
      'cut at 390 s of clock time (limit 390 s; 20 s real)',
    );
    expect(cutReason(cut, { clockMs: 40_000, realMs: 30 * 60_000 })).toBe(
      'cut at 1800 s of real time (limit 1800 s; clock 40 s of 390 s)',
    );
    // A short bound still gets 300 s of clock time.
    expect(caseCut(true, 2_000).clockMs).toBe(300_000);
  });

  it('bounds a wall-clock case by real time only: 8 x its bound, at least 300 s', () => {
    expect(caseCut(false, 19_500)).toEqual({ realMs: 300_000 });
    expect(caseCut(false, 60_000)).toEqual({ realMs: 480_000 });
    expect(cutReason(caseCut(false, 60_000), { clockMs: 10_000_000, realMs: 479_000 })).toBeUndefined();
    expect(cutReason(caseCut(false, 60_000), { clockMs: 0, realMs: 480_000 })).toMatch(
      /^cut at 480 s of real time/,
    );
    expect(() => caseCut(true, Number.NaN)).toThrow(/bound/);
  });

  it('aborts the wait with the reason once the clock passes the cut', async () => {
    let clockMs = 0;
    const watch = watchCut(caseCut(true, 1_000), () => ({ clockMs, realMs: 5 }), 5);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(watch.signal.aborted).toBe(false);
    clockMs = 300_000;
    await new Promise<void>((resolve) => watch.signal.addEventListener('abort', () => resolve()));
    expect(watch.reason()).toMatch(/^cut at 300 s of clock time/);
    expect(String(watch.signal.reason)).toMatch(/clock time/);
    watch.stop();
  });
});
