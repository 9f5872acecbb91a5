/** Option defaults and normalisation. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LINK_TTL_MS, SANDBOX_API_KEY } from '../../../shared/sandbox/constants';
import { resolveOptions } from '../../../shared/sandbox/options';

describe('resolveOptions', () => {
  it('fills in the documented defaults', () => {
    const options = resolveOptions();
    expect(options).toMatchObject({
      port: 0,
      host: '127.0.0.1',
      keys: [{ key: SANDBOX_API_KEY }],
      linkTtlMs: DEFAULT_LINK_TTL_MS,
      seed: 1,
      streamChunkDelayMs: 20,
      faults: [],
      taskDurations: {},
    });
    expect(options.now).toBe(Date.now);
    expect(options.defaultTaskDuration).toBeUndefined();
  });

  it('accepts task durations by short name and stores them by operationId', () => {
    const options = resolveOptions({ taskDurations: { 'ai35-7': { meanMs: 1, spreadMs: 0 } } });
    expect(options.taskDurations).toEqual({ 'ai35-7NoveltySearchAgentSearch': { meanMs: 1, spreadMs: 0 } });
  });

  it('names every bad field', () => {
    expect(() => resolveOptions({ keys: [], linkTtlMs: 0 })).toThrow(/options\.keys: .*; options\.linkTtlMs/);
    // @ts-expect-error not a function
    expect(() => resolveOptions({ now: 5 })).toThrow(/options\.now: must be a function/);
  });
});
