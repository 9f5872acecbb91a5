/**
 * What a workflow takes and does, derived from the workflow itself: its input fields with types,
 * limits and defaults from its zod schema (as JSON Schema), the common field names it also accepts,
 * an example it accepts, and the calls its steps make. `opflow workflows` prints it and the
 * dashboard builds its New job form from it.
 */
import * as z from 'zod';
import type { Workflow } from '../engine/workflow';
import { catalogue, type OperationId } from '../openplatform/catalogue';
import { anyWorkflowExample } from './common/any-workflow-example';

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
