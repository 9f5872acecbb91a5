import { describe, expect, it } from 'vitest';
import { JobRequestError, submitJob } from '../../../../shared/engine';
import { harness } from '../fixtures';

const input = { issue: 'reduce battery swelling' };

describe('a job priority', () => {
  it('is kept on the record when high or low, and absent for normal (the default)', async () => {
    const h = harness(() => ({}));
    const high = (await submitJob(h.deps, { workflow: 'demo', input, priority: 'high' })).job;
    const low = (await submitJob(h.deps, { workflow: 'demo', input, priority: 'low' })).job;
    const normal = (await submitJob(h.deps, { workflow: 'demo', input, priority: 'normal' })).job;
    const unset = (await submitJob(h.deps, { workflow: 'demo', input })).job;
    expect((await h.store.get(high.id))?.priority).toBe('high');
    expect((await h.store.get(low.id))?.priority).toBe('low');
    expect((await h.store.get(normal.id))?.priority).toBeUndefined();
    expect(unset.priority).toBeUndefined();
  });

  it('refuses any other value, naming the field and the values allowed', async () => {
    const h = harness(() => ({}));
    const refused = submitJob(h.deps, { workflow: 'demo', input, priority: 'urgent' as never });
    await expect(refused).rejects.toThrow(JobRequestError);
    await expect(refused).rejects.toThrow(/priority: must be one of high, normal, low/);
  });
});
