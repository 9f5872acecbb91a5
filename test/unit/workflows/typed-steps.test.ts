/**
 * Steps are linked by typed handles: the type checker (npm run typecheck covers this file) refuses
 * a `needs` or `ctx.output` on a handle of another workflow and a misspelt key, and defineWorkflow
 * refuses at load what a cast hid from it.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod';
import { defineWorkflow, stepContext, stepsFor } from '../../../shared/engine/workflow';
import type { DataOf } from '../../../shared/openplatform/schemas/responses';
import { nonEmpty } from '../../../shared/workflows/common/step-data';

const input = z.object({ text: z.string() });
const a = stepsFor('a', input);
const b = stepsFor('b', input);
const taskId = a.key('taskId', nonEmpty);
const keys = { taskId };

const summary = a.call({
  name: 'summary',
  operation: 'ai35-2TechSolutionGet',
  request: (ctx) => ({ task_id: ctx.get(taskId) }),
  decide: () => ({ type: 'next' }),
});
const elsewhere = b.call({
  name: 'summary',
  operation: 'ai35-2TechSolutionGet',
  request: () => ({ task_id: 't' }),
  decide: () => ({ type: 'next' }),
});

describe('typed step handles', () => {
  it('types what a step reads from the operation of the step it needs', () => {
    a.call({
      name: 'confirm',
      operation: 'ai35-3TechSolutionUpdate',
      needs: [summary],
      request: (ctx) => {
        expectTypeOf(ctx.output(summary)).toEqualTypeOf<DataOf<'ai35-2TechSolutionGet'>>();
        expectTypeOf(ctx.get(taskId)).toEqualTypeOf<string>();
        return { task_id: ctx.get(keys.taskId) };
      },
      decide: () => ({ type: 'next' }),
    });
  });

  it('refuses a handle of another workflow and a misspelt key (type errors)', () => {
    b.call({
      name: 'confirm',
      operation: 'ai35-3TechSolutionUpdate',
      // @ts-expect-error a step of workflow a is not a step of workflow b
      needs: [summary],
      request: (ctx) => ({
        // @ts-expect-error a key of workflow a is not a key of workflow b
        task_id: ctx.get(taskId),
        // @ts-expect-error the key is taskId
        other: ctx.get(keys.taskid),
      }),
      decide: () => ({ type: 'next' }),
    });
    a.call({
      name: 'confirm',
      operation: 'ai35-3TechSolutionUpdate',
      needs: [summary],
      request: (ctx) => ({
        // @ts-expect-error ctx.output reads a step of this workflow only
        task_id: ctx.output(elsewhere).tech_solution ?? '',
      }),
      decide: () => ({ type: 'next' }),
    });
    expect(summary.name).toBe('summary');
  });

  it('refuses at load a need that is not one of the workflow own steps', () => {
    const confirm = a.call({
      name: 'confirm',
      operation: 'ai35-3TechSolutionUpdate',
      needs: [elsewhere as unknown as typeof summary],
      request: (ctx) => ({ task_id: ctx.get(taskId) }),
      decide: () => ({ type: 'next' }),
    });
    const declare = () =>
      defineWorkflow({
        name: 'a',
        version: 1,
        description: 'a',
        input,
        steps: [summary, confirm],
        report: () => ({ title: 'a', markdown: '' }),
      });
    expect(declare).toThrow('workflow a: step "confirm" needs "summary", which is not one of its steps');
  });

  it('names the step to go to by a handle, and records its persisted name', () => {
    const link = a.call({
      name: 'link',
      operation: 'ai35-2TechSolutionGet',
      request: () => ({ task_id: 't' }),
      decide: () => ({ type: 'next', step: summary, context: { round: 2 } }),
    });
    const document = a.fetch({ name: 'document', url: () => 'https://example.test/d', refreshFrom: link });
    a.call({
      name: 'wrong',
      operation: 'ai35-2TechSolutionGet',
      request: () => ({ task_id: 't' }),
      // @ts-expect-error a step of workflow b is not a step of workflow a
      decide: () => ({ type: 'next', step: elsewhere }),
    });
    // @ts-expect-error a step is named by its handle, not by a string
    a.fetch({ name: 'by-name', url: () => 'https://example.test/d', refreshFrom: 'link' });
    b.fetch({
      name: 'document',
      url: () => 'https://example.test/d',
      // @ts-expect-error a step of workflow a is not a step of workflow b
      refreshFrom: link,
    });

    // The engine applies and records the decision with the step's persisted name, as before handles.
    const ctx = stepContext({
      job: {} as never,
      input: { text: '' },
      context: {},
      selections: {},
      outputs: {},
      now: 0,
    });
    expect(link.decide({}, ctx)).toEqual({ type: 'next', step: 'summary', context: { round: 2 } });
    expect(document.refreshFrom).toBe('link');
  });

  it('starts a job at the step a handle names', () => {
    const workflow = defineWorkflow({
      name: 'a',
      version: 1,
      description: 'a',
      input,
      start: (i) => (i.text === 'confirm' ? summary : summary),
      steps: [summary],
      report: () => ({ title: 'a', markdown: '' }),
    });
    expect(workflow.start?.({ text: 'x' })).toBe('summary');
  });

  it('refuses at load a refreshFrom that is not one of the workflow own steps', () => {
    const document = b.fetch({
      name: 'document',
      url: () => 'https://example.test/d',
      refreshFrom: elsewhere,
    });
    const declare = () =>
      defineWorkflow({
        name: 'b',
        version: 1,
        description: 'b',
        input,
        steps: [document],
        report: () => ({ title: 'b', markdown: '' }),
      });
    expect(declare).toThrow(
      'workflow b: step "document" refreshes from "summary", which is not one of its steps',
    );
  });
});
