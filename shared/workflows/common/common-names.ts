/**
 * One naming of the fields every workflow shares: `text` is the main input of every workflow and
 * `lang` its language, whatever the workflow calls them (`problem`, `question`, `query`,
 * `language`, declared by the workflow as its `commonNames`); the workflow's own names keep
 * working. Applied in front of each workflow's input schema (a preprocess, transparent to JSON
 * Schema), so the API, the CLI, manifests and MCP all accept both.
 */
import * as z from 'zod';
import type { Workflow } from '../../engine/workflow';

/** The input with common names renamed to the workflow's own; both given is left to the schema to refuse. */
export function renameCommonFields(names: Readonly<Record<string, string>>, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const input = value as Record<string, unknown>;
  const renamed: Record<string, unknown> = { ...input };
  for (const [common, own] of Object.entries(names)) {
    if (common in input && !(own in input)) {
      renamed[own] = input[common];
      delete renamed[common];
    }
  }
  return renamed;
}

/**
 * The workflow taking the common names too. The wrapper is built on first use (`z.lazy`), as the
 * workflow's own input schema is: building the registry builds no schema.
 */
export function withCommonNames<Input>(workflow: Workflow<Input>): Workflow<Input> {
  const names = workflow.commonNames;
  if (!names) return workflow;
  const input = z.lazy(() => z.preprocess((value) => renameCommonFields(names, value), workflow.input));
  return { ...workflow, input: input as unknown as z.ZodType<Input> };
}
