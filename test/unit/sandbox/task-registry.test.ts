/** Task registries: owners, and what a state file needs (which records changed, reading them back). */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { SandboxRejection } from '../../../shared/sandbox/sandbox-rejection';
import { TaskRegistry } from '../../../shared/sandbox/task-registry';

interface Task {
  owner: string;
  steps: string[];
}
const taskSchema = z.strictObject({ owner: z.string(), steps: z.array(z.string()) });
const registry = () => new TaskRegistry<Task>('things', 'task_id', taskSchema, true);

describe('TaskRegistry', () => {
  it('answers not-found for an unknown id and for another key’s record', () => {
    const tasks = registry();
    tasks.add('t1', { owner: 'a', steps: [] });
    expect(tasks.get('t1', 'a').owner).toBe('a');
    for (const [id, owner] of [
      ['t2', 'a'],
      ['t1', 'b'],
    ] as const) {
      const error = (() => {
        try {
          tasks.get(id, owner);
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(SandboxRejection);
      expect((error as SandboxRejection).httpStatus).toBe(404);
    }
  });

  it('reports a change only when a record handed out was actually changed', () => {
    const tasks = registry();
    tasks.add('t1', { owner: 'a', steps: [] });
    expect(tasks.settle()).toBe(true);
    expect(tasks.settle()).toBe(false);
    tasks.get('t1', 'a'); // read only
    expect(tasks.settle()).toBe(false);
    tasks.get('t1', 'a').steps.push('confirmed');
    expect(tasks.settle()).toBe(true);
    expect(JSON.parse(tasks.toJson())).toEqual({ t1: { owner: 'a', steps: ['confirmed'] } });
  });

  it('reads records back, or none at all when one is not valid, naming it', () => {
    const tasks = registry();
    tasks.restore({ t1: { owner: 'a', steps: ['x'] } });
    expect(tasks.get('t1', 'a').steps).toEqual(['x']);
    expect(() => tasks.restore({ t2: { owner: 'a', steps: [] }, t3: { owner: 'a', steps: 'x' } })).toThrow(
      /^things\.t3\.steps: expected array, received string$/,
    );
    expect(tasks.size).toBe(1);
    expect(JSON.parse(tasks.toJson())).toEqual({ t1: { owner: 'a', steps: ['x'] } });
  });

  it('tracks nothing without a state file', () => {
    const tasks = new TaskRegistry<Task>('things', 'task_id', taskSchema);
    tasks.add('t1', { owner: 'a', steps: [] });
    expect(tasks.settle()).toBe(false);
    expect(tasks.toJson()).toBe('{}');
  });
});
