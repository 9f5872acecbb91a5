import { describe, expect, it } from 'vitest';
import {
  type ChainShape,
  chainBoundMs,
  type JobDraws,
  KeyLimiter,
  type LimiterKind,
  matrixBoundMs,
  noveltyChain,
  sandboxBatch,
  schedule,
} from '../../../bench/throughput-schedule';
import { families } from '../../../bench/throughput-worlds';
import type { SandboxKey } from '../../../shared/sandbox';
import { KeyGate } from '../../../shared/sandbox/key-gate';
import { SandboxState } from '../../../shared/sandbox/sandbox-state';
import { SeededRandom } from '../../../shared/sandbox/seeded';

// call (starts a task), poll, call (starts a task), poll: 4 calls, 2 tasks.
const twoTasks: ChainShape = { calls: 4, starts: [0, 2] };
const fixedDraws = (tasks: number[]): JobDraws => ({ base: tasks, draw: (task) => tasks[task] ?? 0 });

const sandboxKey: Record<Exclude<LimiterKind, 'spaced'>, (qps: number) => SandboxKey> = {
  sliding: (qps) => ({ key: 'k', qps, limiter: 'sliding-window' }),
  bucket: (qps) => ({ key: 'k', qps, limiter: 'token-bucket', burst: 2 * qps }),
  fixed: (qps) => ({ key: 'k', qps, limiter: 'fixed-window' }),
};

/** Whether the sandbox's gate admits a call at `now` (it counts the call when it does). */
function gateAdmits(gate: KeyGate, now: number): boolean {
  try {
    gate.admit(gate.identify('Bearer k', null), now);
    return true;
  } catch {
    return false;
  }
}

describe('the offline schedule (bench/throughput-schedule.ts)', () => {
  it('gives the hand-computed makespans on two jobs of known tasks, one call a second', () => {
    // A: tasks 3 s and 3 s, B: 1 s and 1 s. Longest remaining chain first: A submits at 0, B at 1;
    // B's poll at 2 passes; at 3 A's poll (4 s of chain after it) goes before B's call (1 s), at 4
    // A's second call, at 5 B's, at 6 B's last poll, at 7 A's: 7 s, 8 calls, no poll wasted.
    const batch = [fixedDraws([3000, 3000]), fixedDraws([1000, 1000])];
    const lrc = schedule(twoTasks, batch, new KeyLimiter('spaced', 1), { order: 'lrc' });
    expect(lrc).toEqual({
      makespanMs: 7000,
      calls: 8,
      tasks: [
        [3000, 3000],
        [1000, 1000],
      ],
    });
    // The call ready first: at 3 B's call (ready since 2) goes before A's poll, so A's second task
    // starts at 5 and ends at 8.
    const fifo = schedule(twoTasks, batch, new KeyLimiter('spaced', 1), { order: 'fifo' });
    expect(fifo.makespanMs).toBe(8000);
    expect(fifo.calls).toBe(8);
    expect(matrixBoundMs(twoTasks, lrc.tasks, 1)).toBe(8000);
  });

  it('polls a task by its timing, and a poll that finds it running costs a call', () => {
    // Polls 1.5 s after the start, then every second after: a 3 s task is found at 1.5, 2.5, 3.5.
    const timing = {
      next: (runningAt: number) => (runningAt === 0 ? 1500 : runningAt + 1000),
      expectedEnd: () => 2000,
      doneBy: () => 0,
    };
    const result = schedule({ calls: 2, starts: [0] }, [fixedDraws([3000])], new KeyLimiter('spaced', 10), {
      order: 'fifo',
      timing,
    });
    expect(result).toEqual({ makespanMs: 3500, calls: 4, tasks: [[3000]] });
  });

  it('slows a task by the tasks running when it starts (drift), as the sandbox does', () => {
    const batch = sandboxBatch(7, 2, families.drift);
    const slowdown = { perTask: 0.04, max: 3 };
    const result = schedule(noveltyChain, batch, new KeyLimiter('sliding', 20), { order: 'lrc', slowdown });
    // Both submits at 0: the second's first task starts with the first's running, 4 % longer.
    const [first, second] = batch.map((job) => job.base[0] ?? 0);
    expect(result.tasks.map((tasks) => tasks[0])).toEqual(
      expect.arrayContaining([first, Math.round((second ?? 0) * 1.04)]),
    );
  });

  it("draws the sandbox's task ids and the bench's batch for a seed", () => {
    const state = new SandboxState({
      seed: 211,
      idSalt: '',
      now: () => 0,
      links: {} as never,
      gate: {} as never,
    });
    const ids = SeededRandom.from(211, 'ids');
    expect(state.newId('hex')).toBe(ids.hex(32));
    // The bench's `lognormal sliding 20/s` cell (seed 211): chain+budget 75.4 s, bound 75 s
    // (bench/throughput.md, "The bound, checked").
    const tasks = sandboxBatch(211, 30, families.lognormal).map((job) => [...job.base]);
    expect(chainBoundMs(tasks, 20)).toBe(75_411);
    expect(matrixBoundMs(noveltyChain, tasks, 20)).toBe(75_011);
  });

  it("refuses the calls the sandbox's limiter would throttle", () => {
    const refuses = (kind: Exclude<LimiterKind, 'spaced'>, qps: number, admitted: number[], at: number) => {
      const model = new KeyLimiter(kind, qps);
      const gate = new KeyGate([sandboxKey[kind](qps)]);
      for (const time of admitted) {
        expect(model.admits(time)).toBe(true);
        expect(gateAdmits(gate, time)).toBe(true);
        model.take(time);
      }
      return { model: !model.admits(at), gate: !gateAdmits(gate, at), next: model.nextFree(at) };
    };
    // Two calls in the last second at 2/s, four at once from a full bucket of 2 s, two in this second.
    expect(refuses('sliding', 2, [0, 100], 999)).toEqual({ model: true, gate: true, next: 1000 });
    expect(refuses('bucket', 2, [0, 0, 0, 0], 0)).toEqual({ model: true, gate: true, next: 500 });
    expect(refuses('fixed', 2, [900, 950], 999)).toEqual({ model: true, gate: true, next: 1000 });
  });

  it("admits call for call as the sandbox's limiter on random sequences, and nextFree is the first admitted ms", () => {
    const random = new SeededRandom(3);
    for (const kind of ['sliding', 'bucket', 'fixed'] as const)
      for (const qps of [2, 5, 20]) {
        const model = new KeyLimiter(kind, qps);
        const gate = new KeyGate([sandboxKey[kind](qps)]);
        let now = 0;
        for (let call = 0; call < 250; call++) {
          now += random.int(0, Math.ceil(2000 / qps));
          const admits = model.admits(now);
          expect(gateAdmits(gate, now), `${kind} ${qps}/s at ${now}`).toBe(admits);
          if (admits) model.take(now);
          const next = model.nextFree(now);
          expect(model.admits(next)).toBe(true);
          if (next > now) expect(model.admits(next - 1)).toBe(false);
        }
      }
  });
});
