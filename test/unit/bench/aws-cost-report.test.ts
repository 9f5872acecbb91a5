import { describe, expect, it } from 'vitest';
import type { CostCounts } from '../../../bench/aws-cost-accounting';
import { goalSummary, messageVerdict, verdictLine } from '../../../bench/aws-cost-report';

const counts = (jobs: number, messages: number, calls: number, writes: number): CostCounts => ({
  jobs,
  messagesReceived: messages,
  messagesSent: messages,
  sqsRequests: messages,
  writeUnits: writes,
  indexWriteUnits: 0,
  conditionFailures: 0,
  readUnits: 0,
  workerRuns: 0,
  sweeperRuns: 0,
  workerMs: 0,
  sweeperMs: 0,
  upstreamCalls: calls,
});

describe('the aws cost bench judges a backlog against a job alone', () => {
  it('messages per job and per upstream call, backlog over alone, against the 1.15 goal', () => {
    // Alone 14.8 messages and calls a job; the backlog 14.0 a job (uniform bucket 5/s, seed 23).
    const alone = counts(10, 148, 148, 1388);
    const backlog = counts(30, 420, 420, 4020);
    const v = messageVerdict(alone, backlog);
    expect(v.perJob).toBeCloseTo(14 / 14.8, 5);
    expect(v.perCall).toBeCloseTo(1, 5);
    expect(v.writesPerJob).toBeCloseTo(134 / 138.8, 5);
    expect(v.meets).toBe(true);
    // A backlog whose jobs wait with extra messages (a parked job's wake-ups): 17.5 a job for 14 calls.
    const waiting = messageVerdict(alone, counts(30, 525, 420, 4020));
    expect(waiting.perJob).toBeCloseTo(17.5 / 14.8, 5);
    expect(waiting.perCall).toBeCloseTo(1.25, 5);
    expect(waiting.meets).toBe(false);
    expect(verdictLine({ label: 'x', alone, backlog: counts(30, 525, 420, 4020) })).toMatch(
      /messages per job 1\.18 of alone, per upstream call 1\.25, .*MISSES the goal/,
    );
  });

  it('a cell that failed prints no figure and counts as not meeting the goal', () => {
    const alone = counts(10, 148, 148, 1388);
    const cells = [
      { label: 'uniform bucket 5/s', alone, backlog: counts(30, 420, 420, 4020) },
      { label: 'pareto sliding 5/s', failed: '2 of 30 jobs did not succeed: poll timed out' },
    ];
    expect(verdictLine(cells[1] as (typeof cells)[1])).toBe(
      'pareto sliding 5/s: FAILED (2 of 30 jobs did not succeed: poll timed out): no figure, goal not met',
    );
    expect(goalSummary(cells)).toBe(
      'backlog messages per job at most 1.15 times alone: met on 1 of 2 cells (1 failed: pareto sliding 5/s)',
    );
  });
});
