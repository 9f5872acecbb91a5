/** A stage runs for its duration by the sandbox clock, then succeeds or fails as it was told. */
import { describe, expect, it } from 'vitest';
import { numericStatus, stageProgress, stageState, upperStatus } from '../../../shared/sandbox/stages';

describe('stages', () => {
  const stage = { startedBy: 'ai35-1NoveltySearchSubmit', startedAt: 1_000, durationMs: 500, fails: false };

  it('is running until its duration has passed, then done', () => {
    expect(stageState(stage, 1_000)).toBe('running');
    expect(stageState(stage, 1_499)).toBe('running');
    expect(stageState(stage, 1_500)).toBe('succeeded');
    expect(stageState({ ...stage, fails: true }, 1_500)).toBe('failed');
    expect(stageProgress(stage, 1_250)).toBe(0.5);
    expect(stageProgress({ ...stage, durationMs: 0 }, 1_000)).toBe(1);
  });

  it('encodes states the way each operation family does', () => {
    expect(['running', 'succeeded', 'failed'].map((s) => upperStatus(s as 'running'))).toEqual([
      'RUNNING',
      'SUCCEED',
      'FAILED',
    ]);
    expect(['running', 'succeeded', 'failed'].map((s) => numericStatus(s as 'running'))).toEqual([1, 2, 3]);
  });
});
