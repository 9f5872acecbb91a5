import { describe, expect, it } from 'vitest';
import { describeRunCalls, remotePollMs } from '../../../shared/cli/drive-jobs';
import type { Job } from '../../../shared/engine/job-record';

describe('remotePollMs', () => {
  it('reads a few remote jobs every half second and a batch at about four item reads a second, at most every 2 s', () => {
    expect([0, 1, 2, 3, 6, 8, 1000].map(remotePollMs)).toEqual([500, 500, 500, 750, 1500, 2000, 2000]);
  });
});

describe('describeRunCalls', () => {
  const job = (id: string, calls: number) => ({ id, usage: { calls } }) as unknown as Job;

  it("counts only this run's calls; a reused job's calls are said as made earlier", () => {
    const done = [job('a', 40), job('b', 58)];
    // A second run of the same inputs: every job reused, none made a call now.
    expect(describeRunCalls(done, [{ jobId: 'a' }, { jobId: 'b' }])).toBe(
      '0 calls; 2 jobs reused, 98 calls made by them earlier',
    );
    // One new job beside one reused.
    expect(describeRunCalls([job('a', 40), job('c', 1)], [{ jobId: 'a' }])).toBe(
      '1 call; 1 job reused, 40 calls made by it earlier',
    );
    // Nothing reused: just the calls.
    expect(describeRunCalls(done, [])).toBe('98 calls');
  });
});
