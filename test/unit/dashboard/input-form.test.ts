// The dashboard's job form from a workflow's input schema: the fields, their defaults and limits,
// and the input the typed values make (or what is wrong with them), for real workflows.
import { describe, expect, it } from 'vitest';
import { fieldOfRefusal, formFields, inputOf, valuesOf } from '../../../dashboard/src/input-form';
import { describeWorkflow } from '../../../shared/cli/commands/workflows';
import { workflows } from '../../../shared/workflows';

const docOf = (name: string) => describeWorkflow(workflows.get(name)!);

describe('the job form of a workflow', () => {
  it('has a field per input property, the main field first, with its kind, default and limits', () => {
    const fields = formFields(docOf('novelty-check'));
    expect(fields[0]).toMatchObject({ name: 'text', kind: 'longtext', required: true });
    const byName = new Map(fields.map((field) => [field.name, field]));
    expect(byName.get('lang')).toMatchObject({ kind: 'choice', choices: ['cn', 'en'], required: false });
    expect(byName.get('bibliography')).toMatchObject({ kind: 'flag' });
    expect(byName.get('title')?.hint).toContain('at most 200 characters');
    expect(byName.get('pbdStart')?.hint).toMatch(/matches/);
    expect(valuesOf(fields)).toMatchObject({ text: '', lang: 'en', bibliography: 'true' });
  });

  it('makes the input the workflow accepts from the example, leaving defaults out', () => {
    const doc = docOf('novelty-check');
    const fields = formFields(doc);
    const { input, problems } = inputOf(fields, valuesOf(fields, doc.example as Record<string, unknown>));
    expect(problems).toEqual({});
    expect(workflows.get('novelty-check')!.input.safeParse(input).success).toBe(true);
    expect(input).not.toHaveProperty('bibliography');
    expect(inputOf(fields, { ...valuesOf(fields), text: 'x', bibliography: 'false' }).input).toMatchObject({
      bibliography: false,
    });
  });

  it('says what is wrong with each field, by name, as the schema would', () => {
    const fields = formFields(docOf('novelty-check'));
    const { problems } = inputOf(fields, {
      ...valuesOf(fields),
      title: 'x'.repeat(201),
      pbdStart: 'last spring',
      lang: 'fr',
    });
    expect(problems).toEqual({
      text: 'is required',
      title: 'takes at most 200 characters (201 now)',
      pbdStart: expect.stringMatching(/^does not match/),
      lang: 'must be one of cn, en',
    });
  });

  it('reads numbers and lists, and names the field of a refusal of the server', () => {
    for (const [name, doc] of [...workflows.keys()].map((key) => [key, docOf(key)] as const)) {
      const fields = formFields(doc);
      const { problems } = inputOf(fields, valuesOf(fields, doc.example as Record<string, unknown>));
      // Every workflow's own example passes its form (call's example is an operation's).
      expect(problems, name).toEqual({});
    }
    expect(fieldOfRefusal('body.input.query: must not be empty')).toBe('query');
    expect(fieldOfRefusal('the job API answered 500')).toBeUndefined();
  });
});
