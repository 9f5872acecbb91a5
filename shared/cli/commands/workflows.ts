/**
 * `opflow workflows [name]` (and `opflow help <workflow>`): what each workflow takes and does,
 * derived from the workflow itself: its input fields with types, limits and defaults from its zod
 * schema (as JSON Schema), the common field names it also accepts, an example it accepts, and the
 * calls its steps make (shared/workflows/describe.ts). Nothing here is copied by hand from the workflows.
 */
export { describeWorkflow, type FieldDoc, type WorkflowDoc } from '../../workflows/describe';

import { describeWorkflow, type WorkflowDoc } from '../../workflows/describe';
import { type CliContext, type GlobalOptions, writeJson } from '../context';
import { ExitCode, type ExitCodeValue } from '../exit-codes';
import { formatTable } from '../format';
import { requireWorkflow } from './run';

export function formatWorkflowDoc(doc: WorkflowDoc): string {
  const lines = [`${doc.name}: ${doc.description}`, '', 'Input fields (JSON; the API body\'s "input"):'];
  for (const field of doc.fields) {
    const notes = [
      field.required ? 'required' : 'optional',
      ...(field.default !== undefined ? [`default ${JSON.stringify(field.default)}`] : []),
      ...field.limits,
      ...(field.alsoAs.length > 0 ? [`also accepted as "${field.alsoAs.join('", "')}"`] : []),
    ];
    lines.push(`  ${field.name.padEnd(14)} ${field.type}`, `  ${' '.repeat(14)} ${notes.join('; ')}`);
  }
  lines.push(
    '',
    doc.takesText
      ? `Inputs: .json files of these fields, or .txt/.md/.docx/.pdf documents (the text goes into "${doc.mainField}", a short first line or a # heading is the title).`
      : 'Inputs: .json files of these fields.',
    '',
    'Example (examples/any-workflow.json works for every workflow but call):',
    ...JSON.stringify(doc.example, null, 2)
      .split('\n')
      .map((line) => `  ${line}`),
    '',
    `  echo '${JSON.stringify(doc.example)}' > input.json && opflow run ${doc.name} input.json`,
    '',
    'Calls it makes, in order:',
    ...doc.steps.map(
      (step, index) =>
        `  ${String(index + 1).padStart(2)}. ${step.title}${
          step.operation
            ? `  (${step.ref ?? step.operation}${step.ref ? `, ${step.operation}` : ''})`
            : step.kind === 'request'
              ? '  (the operation the input names; a paged one once per page)'
              : '  (download)'
        }${step.optional ? '\n      optional' : ''}${step.note ? `${step.optional ? ': ' : '\n      '}${step.note}` : ''}`,
    ),
  );
  return lines.join('\n');
}

export async function workflowsCommand(
  ctx: CliContext,
  name: string | undefined,
  options: GlobalOptions,
): Promise<ExitCodeValue> {
  if (name !== undefined) {
    const doc = describeWorkflow(requireWorkflow(ctx, name));
    if (options.json) writeJson(ctx.io, doc);
    else ctx.io.stdout.write(`${formatWorkflowDoc(doc)}\n`);
    return ExitCode.ok;
  }
  const docs = [...ctx.workflows.values()].map(describeWorkflow);
  if (options.json) {
    writeJson(ctx.io, { workflows: docs });
    return ExitCode.ok;
  }
  const rows = docs.map((doc) => [
    doc.name,
    doc.fields
      .filter((field) => field.required || field.name === doc.mainField)
      .map((field) => field.name)
      .join(', ') || doc.mainField,
    doc.description,
  ]);
  ctx.io.stdout.write(
    `${formatTable(['WORKFLOW', 'MAIN FIELD', 'WHAT IT DOES'], rows)}\n\nEvery workflow also takes its main field as "text" (and its language as "lang"). opflow workflows <name> shows every field, its limits and defaults, an example and the calls made.\n`,
  );
  return ExitCode.ok;
}
