/**
 * `opflow workflows [name]` (and `opflow help <workflow>`): what each workflow takes and does,
 * derived from the workflow itself: its input fields with types, limits and defaults from its zod
 * schema (as JSON Schema), the common field names it also accepts, an example it accepts, and the
 * calls its steps make. Nothing here is copied by hand from the workflows.
 */
import * as z from 'zod';
import type { Workflow } from '../../engine/workflow';
import { catalogue, type OperationId } from '../../openplatform/catalogue';
import { anyWorkflowExample } from '../../workflows/common/any-workflow-example';
import { type CliContext, type GlobalOptions, writeJson } from '../context';
import { ExitCode, type ExitCodeValue } from '../exit-codes';
import { formatTable } from '../format';
import { requireWorkflow } from './run';

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
  pattern?: string;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  description?: string;
}

export interface FieldDoc {
  name: string;
  type: string;
  required: boolean;
  default?: unknown;
  limits: string[];
  /** Common names that mean this field too (e.g. `text` for `problem`). */
  alsoAs: string[];
}

export interface WorkflowDoc {
  name: string;
  description: string;
  fields: FieldDoc[];
  /** The field the main text goes in (what `text` means here). */
  mainField: string;
  takesText: boolean;
  example: unknown;
  steps: {
    name: string;
    title: string;
    operation?: string | undefined;
    ref?: string | undefined;
    kind: string;
    /** The job goes on without the step's data when it fails. */
    optional?: boolean | undefined;
    note?: string | undefined;
  }[];
  inputSchema: JsonSchema;
}

function typeOf(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map(typeOf).join(' | ');
  if (schema.type === 'array') return `list of ${schema.items ? typeOf(schema.items) : 'values'}`;
  if (schema.type === 'string' && schema.format) return `${schema.format} string`;
  return Array.isArray(schema.type) ? schema.type.join(' | ') : (schema.type ?? 'any');
}

function limitsOf(schema: JsonSchema): string[] {
  const limits: string[] = [];
  if (schema.minLength !== undefined && schema.minLength > 1)
    limits.push(`at least ${schema.minLength} characters`);
  if (schema.minLength === 1) limits.push('not empty');
  if (schema.maxLength !== undefined) limits.push(`at most ${schema.maxLength} characters`);
  if (schema.minimum !== undefined) limits.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined) limits.push(`≤ ${schema.maximum}`);
  if (schema.minItems !== undefined) limits.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) limits.push(`at most ${schema.maxItems} items`);
  if (schema.pattern !== undefined) limits.push(`matches ${schema.pattern}`);
  return limits;
}

export function describeWorkflow(workflow: Workflow): WorkflowDoc {
  const inputSchema = z.toJSONSchema(workflow.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const aliases = workflow.commonNames ?? {};
  const required = new Set(inputSchema.required ?? []);
  const fields = Object.entries(inputSchema.properties ?? {}).map(([name, schema]) => ({
    name,
    type: typeOf(schema),
    required: required.has(name),
    ...(schema.default !== undefined ? { default: schema.default } : {}),
    limits: limitsOf(schema),
    alsoAs: Object.entries(aliases)
      .filter(([, own]) => own === name)
      .map(([common]) => common),
  }));
  const mainField = aliases.text ?? 'text';
  return {
    name: workflow.name,
    description: workflow.description,
    fields,
    mainField,
    takesText: workflow.fromText !== undefined,
    example: workflow.example ?? anyWorkflowExample,
    steps: workflow.steps.map((step) => {
      const operation = step.kind === 'fetch' ? undefined : (step.operation as OperationId);
      return {
        name: step.name,
        title: step.title ?? step.name,
        kind: step.kind,
        operation,
        ref: operation ? catalogue[operation]?.ref : undefined,
        ...(step.optional ? { optional: true } : {}),
        ...(step.note ? { note: step.note } : {}),
      };
    }),
    inputSchema,
  };
}

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
      ? `Inputs: .json files of these fields, or .txt/.md documents (the text goes into "${doc.mainField}", a short first line or a # heading is the title).`
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
