import { describe, expect, it } from 'vitest';
import { contextKey, stepContext } from '../../../shared/engine/workflow';
import {
  nonEmpty,
  numberState,
  outputOf,
  streamOutputOf,
  untilDone,
  withoutNulls,
  wordState,
} from '../../../shared/workflows/common/step-data';

describe('step data', () => {
  it('reads a kept output through the operation schema, or nothing', () => {
    expect(
      outputOf({ summary: { status: '2', tech_solution: 'S' } }, 'summary', 'ai35-2TechSolutionGet'),
    ).toEqual({
      status: 2,
      tech_solution: 'S',
    });
    expect(outputOf({}, 'summary', 'ai35-2TechSolutionGet')).toBeUndefined();
    expect(outputOf({ summary: { status: 'soon' } }, 'summary', 'ai35-2TechSolutionGet')).toBeUndefined();
  });

  it('reads a kept stream answer', () => {
    expect(
      streamOutputOf(
        { answer: { text: 'Hi', references: [{ type: 'patent' }], finishReason: 'stop', ids: {} } },
        'answer',
      ),
    ).toMatchObject({ text: 'Hi', references: [{ type: 'patent' }] });
    expect(streamOutputOf({}, 'answer')).toBeUndefined();
  });

  it('reads a context value through its key, and names a missing one', () => {
    const taskId = contextKey('taskId', nonEmpty);
    const ctx = (context: Record<string, unknown>) =>
      stepContext({ job: {} as never, input: {}, context, selections: {}, outputs: {}, now: 0 });
    expect(ctx({ taskId: 't1' }).get(taskId)).toBe('t1');
    expect(taskId.set('t2')).toEqual({ taskId: 't2' });
    expect(() => ctx({}).get(taskId)).toThrow('the job context has no "taskId"');
    expect(ctx({ taskId: '' }).find(taskId)).toBeUndefined();
  });

  it('removes nulls deeply, in objects and arrays', () => {
    expect(withoutNulls({ a: null, b: [1, null, { c: null, d: 'x' }], e: { f: undefined } })).toEqual({
      b: [1, { d: 'x' }],
      e: {},
    });
  });

  it('maps the upstream status words and numbers', () => {
    expect(['RUNNING', 'SUCCEED', 'FAILED', 'succeed', '', null, 'PAUSED'].map((s) => wordState(s))).toEqual([
      'running',
      'succeeded',
      'failed',
      'succeeded',
      'running',
      'running',
      'unknown',
    ]);
    expect([1, 2, 3, undefined, 0].map((s) => numberState(s))).toEqual([
      'running',
      'succeeded',
      'failed',
      'running',
      'unknown',
    ]);
  });

  it('decides poll, fail or success from a state', () => {
    const done = () => ({ type: 'complete' }) as const;
    expect(untilDone('running', 'the map', 'RUNNING', done)).toEqual({ type: 'poll' });
    expect(untilDone('failed', 'the map', 'FAILED', done)).toEqual({
      type: 'fail',
      message: 'the map failed upstream (status "FAILED")',
    });
    expect(untilDone('unknown', 'the map', 'PAUSED', done)).toEqual({
      type: 'fail',
      message: 'the map answered an unknown status "PAUSED"',
    });
    expect(untilDone('succeeded', 'the map', 'SUCCEED', done)).toEqual({ type: 'complete' });
  });
});
