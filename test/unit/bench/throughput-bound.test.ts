import { describe, expect, it } from 'vitest';
import { chainBudgetBoundMs, chainsLeft, loneFloor, tasksByJob } from '../../../bench/throughput-bound';
import type { LedgerEntry } from '../../../shared/sandbox';

// call (starts a task), poll, call (starts a task), poll: 4 calls, 2 tasks.
const twoTasks = {
  steps: [{ kind: 'call' }, { kind: 'call', poll: {} }, { kind: 'call' }, { kind: 'call', poll: {} }],
};

describe('the chain+budget bound (bench/throughput-bound.ts)', () => {
  it("walks a job's chain: a task before each polled step, a token interval before any other", () => {
    expect(chainsLeft(twoTasks, [3000, 2000], 100)).toEqual([5100, 2100, 2000, 0]);
    // A fetch step makes no call.
    const withFetch = { steps: [...twoTasks.steps, { kind: 'fetch' }] };
    expect(chainsLeft(withFetch, [3000, 2000], 100)).toEqual([5100, 2100, 2000, 0]);
    expect(loneFloor(twoTasks, [3000, 2000], 10)).toBeCloseTo(5100 / 5000, 6);
  });

  it('is above max(N/QPS, longest tasks) when the chains and the budget bind together', () => {
    const jobs = new Map([
      ['a', [3000, 3000]],
      ['b', [3000, 3000]],
    ]);
    // N/QPS = 4 s, longest own tasks 6 s; the second job's first call waits a token and both
    // chains still have 7 s to walk after it, then the same at the second task.
    expect(chainBudgetBoundMs(twoTasks, jobs, 1)).toBe(9000);
  });

  it('equals N/QPS on a budget-bound batch and the chain on a lone job', () => {
    const many = new Map(Array.from({ length: 10 }, (_, i) => [String(i), [100, 100]] as const));
    expect(chainBudgetBoundMs(twoTasks, many, 1)).toBe(40_000);
    expect(chainBudgetBoundMs(twoTasks, new Map([['a', [3000, 2000]]]), 10)).toBe(100 + 5100);
  });

  it("reads each job's tasks in the order they started from the ledger", () => {
    const entry = (seq: number, time: number, salt: string, durationMs: number) =>
      ({ seq, time, startedWork: [{ salt, durationMs }] }) as unknown as LedgerEntry;
    const jobs = tasksByJob([entry(3, 50, 'j1', 7), entry(1, 10, 'j1:export', 5), entry(2, 20, 'j2', 9)]);
    expect([...jobs]).toEqual([
      ['j1', [5, 7]],
      ['j2', [9]],
    ]);
  });
});
