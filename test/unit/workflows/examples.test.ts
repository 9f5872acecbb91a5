import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeWorkflow } from '../../../shared/cli/commands/workflows';
import { workflows } from '../../../shared/workflows';
import { anyWorkflowExample } from '../../../shared/workflows/common/any-workflow-example';

const names = [...workflows.keys()];

describe('examples and common field names', () => {
  it.each(names)(
    '%s accepts examples/any-workflow.json (a document workflow) and its own example',
    (name) => {
      const workflow = workflows.get(name)!;
      const file = JSON.parse(
        readFileSync(new URL('../../../examples/any-workflow.json', import.meta.url), 'utf8'),
      );
      expect(file).toEqual(anyWorkflowExample);
      const any = workflow.input.safeParse(file);
      expect(any.success, JSON.stringify(any.error?.issues)).toBe(workflow.takesDocument !== false);
      const own = workflow.input.safeParse(workflow.example);
      expect(own.success, JSON.stringify(own.error?.issues)).toBe(true);
    },
  );

  it('keeps the old names working and refuses both names at once', () => {
    const disclosure = workflows.get('technical-disclosure')!;
    expect(disclosure.input.parse({ text: 'an idea', language: 'cn' })).toMatchObject({ language: 'cn' });
    expect(disclosure.input.parse({ text: 'an idea', lang: 'cn' })).toMatchObject({ language: 'cn' });
    const solution = workflows.get('find-solution')!;
    expect(solution.input.parse({ problem: 'cracks' })).toMatchObject({ problem: 'cracks' });
    expect(solution.input.parse({ text: 'cracks' })).toMatchObject({ problem: 'cracks' });
    expect(solution.input.safeParse({ text: 'a', problem: 'b' }).success).toBe(false);
  });

  it('describes every field from the schema, with limits, defaults and the common names', () => {
    const doc = describeWorkflow(workflows.get('find-solution')!);
    expect(doc.fields.find((field) => field.name === 'problem')).toMatchObject({
      required: true,
      limits: expect.arrayContaining(['at most 500 characters']),
      alsoAs: ['text'],
    });
    expect(doc.fields.find((field) => field.name === 'lang')).toMatchObject({
      default: 'en',
      required: false,
    });
    expect(doc.steps[0]).toMatchObject({ operation: 'ai33-1Step1V3', ref: 'ai33-1' });
    for (const workflow of workflows.values()) {
      const fields = describeWorkflow(workflow).fields.map((field) => field.name);
      for (const own of Object.values(workflow.commonNames ?? {})) expect(fields).toContain(own);
    }
  });
});
