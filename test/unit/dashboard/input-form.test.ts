// The dashboard's job form from a workflow's input schema: the fields, their defaults and limits,
// and the input the typed values make (or what is wrong with them), for real workflows.
import { describe, expect, it } from 'vitest';
import { problemsOfRefusal } from '../../../dashboard/src/form-problems';
import { formFields, inputOf, valuesOf } from '../../../dashboard/src/input-form';
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
  });
});

describe('a refusal of the server as the form problems', () => {
  /** A refusal as the dashboard's api throws it: the message, and the issues when the server gave them. */
  const refused = (message: string, issues: { path: string; message: string }[] = []) =>
    Object.assign(new Error(message), { issues });
  const fieldOf = (path: string) =>
    path === 'body.input.query' ? { field: 'field-query', label: 'query' } : undefined;

  it('puts each issue at the field its path names, the rest under their path', () => {
    const refusal = refused('invalid input', [
      { path: 'body.input.query', message: 'must not be empty' },
      { path: 'body.input.other', message: 'unknown field' },
    ]);
    expect(problemsOfRefusal(refusal, fieldOf)).toEqual([
      { field: 'field-query', label: 'query', message: 'must not be empty' },
      { label: 'body.input.other', message: 'unknown field' },
    ]);
    // A message that names its field already does not name it twice.
    expect(
      problemsOfRefusal(
        refused('invalid input', [{ path: 'body.input.query', message: 'query: at most 200 characters' }]),
        fieldOf,
      ),
    ).toEqual([{ field: 'field-query', label: 'query', message: 'at most 200 characters' }]);
  });

  it('reads the field from a message without issues, else shows the message whole', () => {
    expect(problemsOfRefusal(refused('body.input.query: too long'), fieldOf)).toEqual([
      { field: 'field-query', label: 'query', message: 'too long' },
    ]);
    expect(problemsOfRefusal(refused('the job API answered 500'), fieldOf)).toEqual([
      { label: 'The server refused it', message: 'the job API answered 500' },
    ]);
  });
});
