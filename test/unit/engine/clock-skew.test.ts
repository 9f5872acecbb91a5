/**
 * A job written by a process whose clock ran two hours ahead is not stranded for two hours when a
 * process on the right time looks at it (`opflow resume`): its due time is re-based on the reader's
 * clock, keeping the wait it meant, and the reader says so in its log.
 */
import { describe, expect, it } from 'vitest';
import { submitJob, sweep } from '../../../shared/engine';
import { makeJob } from '../../support/factories';
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

describe('the sweeper and jobs written by a clock ahead', () => {
  it('sends, whatever the store, each unfinished one with a paid call in flight, not one waiting for a person', async () => {
    const h = harness(happyScript(0));
    const now = h.clock.now();
    const ahead = { createdAt: now + 2 * hour, updatedAt: now + 2 * hour, nextRunAt: now + 2 * hour };
    const calling = makeJob({
      ...ahead,
      status: 'RUNNING',
      inFlightSince: now + 2 * hour,
      inFlightBy: 'h/1/x',
    });
    const queued = makeJob(ahead);
    const answering = makeJob({ ...ahead, status: 'AWAITING_INPUT' });
    const finished = makeJob({ ...ahead, status: 'FAILED', finishedAt: now + 2 * hour });
    const onTime = makeJob({ createdAt: now, updatedAt: now + 1_000, nextRunAt: now + 60_000 });
    // A store hands over its candidates (the port contract suite checks what each finds); the rule
    // of which are sent is the sweeper's.
    Object.assign(h.store, { listWrittenAhead: async () => [calling, queued, answering, finished, onTime] });
    const swept = await sweep(h.deps, { graceMs: 0 });
    expect(swept.writtenAhead).toBe(2);
    expect(h.queue.pending.map((sent) => sent.message.jobId).sort()).toEqual([calling.id, queued.id].sort());
  });
});
