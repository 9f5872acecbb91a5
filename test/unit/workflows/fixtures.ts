/**
 * Factories for the workflow unit tests: a job and a step context for a workflow, a step's request
 * body checked against the operation's request schema, a step's decision on an upstream answer
 * parsed the way the client parses it, and a workflow's report.
 */
import {
  type Job,
  type ReportInput,
  type Step,
  type StepContext,
  type StepDecision,
  stepContext,
  type Workflow,
} from '../../../shared/engine';
import type { OperationId } from '../../../shared/openplatform/catalogue';
import { requestSchemas } from '../../../shared/openplatform/schemas/requests';
import { responseDataSchemas } from '../../../shared/openplatform/schemas/responses';
import { makeJob } from '../../support/factories';

export const NOW = Date.UTC(2026, 0, 5, 9, 0, 0);

// biome-ignore lint/suspicious/noExplicitAny: tests drive workflows of any input type
type AnyWorkflow = Workflow<any>;

/** A job of `workflow` at its first step (the shared job factory's record, for this workflow). */
export function jobFor(workflow: AnyWorkflow, input: unknown, id = '01JTESTJOB0000000000000000'): Job {
  return makeJob({
    id,
    workflow: workflow.name,
    workflowVersion: workflow.version,
    status: 'RUNNING',
    step: workflow.steps[0]?.name ?? '',
    input: { inline: input },
    nextRunAt: NOW,
    deadlineAt: NOW + 86_400_000,
    createdAt: NOW,
    updatedAt: NOW,
  });
}

export interface ContextParts {
  context?: Record<string, unknown>;
  selections?: Record<string, string[]>;
  outputs?: Record<string, unknown>;
}

/** The input as the engine keeps it: validated, defaults applied. */
export function parsedInput(workflow: AnyWorkflow, input: unknown): unknown {
  return workflow.input.parse(input);
}

/** A step context (its input typed `never`, so it fits any workflow's steps). */
export function contextFor(
  workflow: AnyWorkflow,
  input: unknown,
  parts: ContextParts = {},
): StepContext<never> {
  const parsed = parsedInput(workflow, input);
  return stepContext<never>({
    job: jobFor(workflow, parsed),
    input: parsed as never,
    context: parts.context ?? {},
    selections: parts.selections ?? {},
    outputs: parts.outputs ?? {},
    now: NOW,
  });
}

export function stepNamed(workflow: AnyWorkflow, name: string): Step {
  const step = workflow.steps.find((candidate) => candidate.name === name);
  if (!step) throw new Error(`${workflow.name} has no step ${name}`);
  return step;
}

/** The step's request body, parsed by its operation's request schema (throws when invalid). */
export function requestOf(workflow: AnyWorkflow, name: string, ctx: StepContext): Record<string, unknown> {
  const step = stepNamed(workflow, name);
  if (step.kind === 'fetch') throw new Error(`${name} is a fetch step`);
  const body = step.request(ctx);
  return requestSchemas[step.operation as OperationId].parse(body) as Record<string, unknown>;
}

/** The step's raw request body, unchecked. */
export function rawRequestOf(workflow: AnyWorkflow, name: string, ctx: StepContext): unknown {
  const step = stepNamed(workflow, name);
  if (step.kind === 'fetch') throw new Error(`${name} is a fetch step`);
  return step.request(ctx);
}

/** The upstream's `data` as the client hands it over: parsed by the lenient response schema. */
export function answer(operation: OperationId, data: unknown): unknown {
  return responseDataSchemas[operation].parse(data);
}

/** What a call step decides on an upstream answer (parsed as the client parses it). */
export function decideOf(workflow: AnyWorkflow, name: string, data: unknown, ctx: StepContext): StepDecision {
  const step = stepNamed(workflow, name);
  if (step.kind === 'fetch') {
    return (
      step.decide?.({ key: 'k', fileName: 'f', contentType: 'application/pdf' }, ctx) ?? { type: 'next' }
    );
  }
  if (step.kind === 'stream') return step.decide(data as never, ctx);
  return step.decide(answer(step.operation as OperationId, data) as never, ctx);
}

/** What a step keeps: the parsed answer, as the runner stores it. */
export function kept(operation: OperationId, data: unknown): unknown {
  return JSON.parse(JSON.stringify(answer(operation, data)));
}

export interface ReportParts {
  context?: Record<string, unknown>;
  selections?: Record<string, string[]>;
  outputs?: Record<string, unknown>;
  attachments?: ReportInput['attachments'];
}

export function reportOf(workflow: AnyWorkflow, input: unknown, parts: ReportParts = {}) {
  const parsed = parsedInput(workflow, input);
  const job = jobFor(workflow, parsed);
  const reportInput: ReportInput = {
    job,
    input: parsed,
    context: parts.context ?? {},
    selections: parts.selections ?? {},
    outputs: parts.outputs ?? {},
    attachments: parts.attachments ?? [],
  };
  const { title, markdown } = workflow.report(reportInput);
  return { title, markdown, summary: workflow.summary?.(reportInput) ?? '' };
}

/** The issue messages of an input that the workflow refuses. */
export function inputProblems(workflow: AnyWorkflow, input: unknown): string[] {
  const result = workflow.input.safeParse(input);
  if (result.success) return [];
  return result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}
