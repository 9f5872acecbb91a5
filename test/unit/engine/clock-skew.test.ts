/**
 * A job written by a process whose clock ran two hours ahead is not stranded for two hours when a
 * process on the right time looks at it (`opflow resume`): its due time is re-based on the reader's
 * clock, keeping the wait it meant, and the reader says so in its log.
 */
import { describe, expect, it } from 'vitest';
import { submitJob } from '../../../shared/engine';
import { drive } from '../../support/memory-ports';
import { happyScript, harness } from './fixtures';

const hour = 3_600_000;

describe('a job written by a clock ahead of the reader', () => {
  it('runs when its wait is over on the reader clock, not two hours later, and the log says why', async () => {
    const h = harness(happyScript(0));
    const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
    h.deps.log = {
      debug() {},
      info() {},
      warn: (message, fields) => warnings.push({ message, fields }),
      error() {},
    };
    const rightTime = h.clock.now();
    h.clock.current = rightTime + 2 * hour;
    const { job } = await submitJob(h.deps, { workflow: 'demo', input: { issue: 'x' } });
    // The process on the right time takes over (its resume sends the job's message now).
    h.clock.current = rightTime;
    h.queue.pending = [{ message: { jobId: job.id, version: job.version }, visibleAt: rightTime }];
    await drive(h.deps, h.queue, h.clock);
    const done = await h.store.get(job.id);
    expect(done?.status).toBe('SUCCEEDED');
    expect(done!.updatedAt - rightTime).toBeLessThan(10 * 60_000);
    expect(warnings).toContainEqual({
      message: expect.stringContaining('written by a clock ahead of this one'),
      fields: expect.objectContaining({ jobId: job.id, aheadMs: 2 * hour }),
    });
  });
});
