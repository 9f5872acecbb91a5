import { describe, expect, it } from 'vitest';
import {
  idleBudgetS,
  type LastJobInput,
  lastJobLines,
  lastJobView,
} from '../../../bench/throughput-last-job';

/**
 * A job of two tasks at 2 calls/s: submit at 1 s (a 2 s task, ends at 3 s), a poll at 2.5 s finds
 * it running, a poll at 4 s finds it done (due at 3.5 s, its token at 4 s); a confirm at 4.5 s
 * starts a 1 s task (ends at 5.5 s), polled at 5.5 s (done on time). Created at 0, ended at 6 s.
 */
function input(): LastJobInput {
  return {
    label: 'cell learned',
    startedAt: 0,
    createdAt: 0,
    finishedAt: 6_000,
    calls: [
      { index: 10, time: 1_000, operationId: 'ai35-1NoveltySearchSubmit', errorCode: 0, startedMs: 2_000 },
      { index: 12, time: 2_500, operationId: 'ai35-2TechSolutionGet', errorCode: 0 },
      { index: 15, time: 4_000, operationId: 'ai35-2TechSolutionGet', errorCode: 0 },
      { index: 17, time: 4_500, operationId: 'ai35-3TechSolutionUpdate', errorCode: 0, startedMs: 1_000 },
      { index: 19, time: 5_500, operationId: 'ai35-4FeatureExtract', errorCode: 0 },
    ],
    versions: [
      { seen: 11, at: 1_000, nextRunAt: 2_500 },
      // The poll at 2.5 s found the task running: the next aimed at 3.5 s, its token reserved at 4 s.
      { seen: 13, at: 2_500, nextRunAt: 4_000, tokenAt: 4_000 },
      { seen: 16, at: 4_000, nextRunAt: 4_000 },
      { seen: 18, at: 4_500, nextRunAt: 5_500 },
    ],
    // The key's other calls: none between 3 and 4 s (its budget idle there), full from 0 to 1 s.
    keyCallTimes: [0, 500, 1_000, 2_500, 4_000, 4_250, 4_500, 5_500],
    requestedAt: (at) => (at === 4_000 ? 3_500 : undefined),
    pollOperations: new Set(['ai35-2TechSolutionGet', 'ai35-4FeatureExtract']),
    qps: 2,
    throttledCode: 1004,
  };
}

describe("the throughput bench's view of the job that ended last", () => {
  it('splits its time exactly: tasks, before the first call, polls aimed late and token waits, calls between tasks', () => {
    const view = lastJobView(input());
    expect(view.jobMs).toBe(6_000);
    expect(view.tasksMs).toBe(3_000);
    expect(view.beforeFirstCallMs).toBe(1_000);
    expect(view.lateMs).toBe(1_000);
    expect(view.aimedLateMs).toBe(500);
    expect(view.tokenLateMs).toBe(500);
    expect(view.gapsMs).toBe(500);
    expect(view.afterLastCallMs).toBe(500);
    expect(view.tasksMs + view.beforeFirstCallMs + view.lateMs + view.gapsMs + view.afterLastCallMs).toBe(
      view.jobMs,
    );
    expect(view.pollsRunning).toBe(1);
    expect(view.tasks.map((task) => task.polls)).toEqual([
      [
        { atMs: 1_500, done: false, throttled: false },
        { atMs: 3_000, done: true, throttled: false },
      ],
      [{ atMs: 1_000, done: true, throttled: false }],
    ]);
    // Between the true end (3 s) and the done poll (4 s) the key made no call: 2 calls' worth idle.
    expect(view.tasks[0]?.idleWhileLateS).toBe(1);
    expect(lastJobLines(input())[0]).toContain('aimed late 0.50, token waits 0.50');
  });

  it('a due time before the true end counts the whole lateness as a token wait; a throttled poll is not a poll that found the task running', () => {
    const data = input();
    data.requestedAt = () => 2_800;
    data.calls = data.calls.map((call) => (call.index === 12 ? { ...call, errorCode: 1004 } : call));
    const view = lastJobView(data);
    expect(view.aimedLateMs).toBe(0);
    expect(view.tokenLateMs).toBe(1_000);
    expect(view.pollsRunning).toBe(0);
    expect(view.tasks[0]?.polls[0]).toEqual({ atMs: 1_500, done: false, throttled: true });
  });

  it('counts the budget left idle in seconds of calls at the rate', () => {
    expect(idleBudgetS([0, 100, 200], 0, 1_000, 5)).toBeCloseTo(0.4);
    expect(idleBudgetS([0, 100, 200, 300, 400, 500], 0, 1_000, 5)).toBe(0);
    expect(idleBudgetS([], 1_000, 1_000, 5)).toBe(0);
  });
});
