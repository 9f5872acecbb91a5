/**
 * How a workflow is declared: its steps in order, each naming the operation it calls, what it takes
 * from the job, what it keeps, and how it decides done / poll again / ask a person. Everything here
 * is data plus small pure functions; the step runner does the I/O.
 */
import type * as z from 'zod';
import type { OperationId } from '../openplatform/catalogue';
import type { RequestOf } from '../openplatform/schemas/requests';
import type { DataOf } from '../openplatform/schemas/responses';
import type { OperationRequest, StreamOperationId, StreamResult } from '../openplatform/types';
import type { Job, SelectionOption } from './job-record';
import type { PollPolicy, RetryPolicy } from './policies';

/** What a step's functions see. */
export interface StepContext<Input = unknown> {
  job: Job;
  input: Input;
  /** Small values kept between steps (upstream ids, cursors). */
  context: Record<string, unknown>;
  /** Option ids chosen at each selection point, by step name. */
  selections: Record<string, string[]>;
  /** The data of earlier steps this step declared in `needs`, by output name. */
  outputs: Record<string, unknown>;
  now: number;
}

export interface SelectionOffer {
  prompt: string;
  options: SelectionOption[];
  /** Fewest and most options that may be chosen (defaults 1 and all). */
  min?: number;
  max?: number;
}

/** What a step decided after its call. */
export type StepDecision =
  /** Done with this step: go to `step` (default: the next one in order), keeping `context` changes. */
  | { type: 'next'; step?: string; context?: Record<string, unknown> }
  /** The upstream is still working: poll again per the step's poll policy. */
  | { type: 'poll'; context?: Record<string, unknown> }
  /** Offer options: `auto` takes the preselected ones (or all), `manual` asks a person. */
  | { type: 'select'; offer: SelectionOffer; step?: string; context?: Record<string, unknown> }
  /** The workflow is finished: render the report. */
  | { type: 'complete'; context?: Record<string, unknown> }
  /** The upstream reported the task as failed (not retryable). */
  | { type: 'fail'; message: string; code?: number };

interface StepBase<Input> {
  name: string;
  /** Earlier outputs this step's functions read (loaded from the report store). */
  needs?: string[];
  retry?: Partial<RetryPolicy>;
  poll?: Partial<PollPolicy>;
  /** The name its data is kept under (default: the step name); a loop gives each round its own. */
  outputName?: (ctx: StepContext<Input>) => string;
  /** Keep the step's data in the report store and result.json (default true). */
  keep?: boolean;
  /** A short line for progress displays, e.g. "agent search". Default: the step name. */
  title?: string;
}

export interface CallStep<Input, Op extends OperationId = OperationId> extends StepBase<Input> {
  kind: 'call';
  operation: Op;
  // Method syntax on purpose: a step of one operation must fit in a list of steps of any operation.
  request(ctx: StepContext<Input>): RequestOf<Op>;
  decide(data: DataOf<Op>, ctx: StepContext<Input>): StepDecision;
}

export interface StreamStep<Input> extends StepBase<Input> {
  kind: 'stream';
  operation: StreamOperationId;
  request: (ctx: StepContext<Input>) => RequestOf<StreamOperationId>;
  decide: (result: Omit<StreamResult, 'usage'>, ctx: StepContext<Input>) => StepDecision;
}

/**
 * A call of any catalogue operation, named by the job (the `call` workflow): the operation is known
 * only at run time, so its effect (create or read) is looked up then, and its data is untyped.
 */
export interface RequestStep<Input> extends StepBase<Input> {
  kind: 'request';
  /** Never set: the operation comes from `operationOf` (kept so `step.operation` reads uniformly). */
  operation?: undefined;
  /** The operationId or short id this job calls. */
  operationOf: (ctx: StepContext<Input>) => string;
  request: (ctx: StepContext<Input>) => OperationRequest;
  decide: (data: unknown, ctx: StepContext<Input>) => StepDecision;
}

/** Download a document the upstream links to, so opflow keeps its own copy. */
export interface FetchStep<Input> extends StepBase<Input> {
  kind: 'fetch';
  url: (ctx: StepContext<Input>) => string;
  /** The attachment's file name in the report folder (default: the name the server gives). */
  fileName?: (ctx: StepContext<Input>, serverName: string) => string;
  /** When the link has expired, go back to this step to get a fresh one. */
  refreshFrom?: string;
  decide?: (
    attachment: { key: string; fileName: string; contentType: string },
    ctx: StepContext<Input>,
  ) => StepDecision;
}

// biome-ignore lint/suspicious/noExplicitAny: workflows of any input live in one registry
export type Step<Input = any> =
  | CallStep<Input, OperationId>
  | StreamStep<Input>
  | FetchStep<Input>
  | RequestStep<Input>;

/** Everything a report renderer gets once the workflow is complete. */
export interface ReportInput<Input = unknown> {
  job: Job;
  input: Input;
  context: Record<string, unknown>;
  selections: Record<string, string[]>;
  /** Every kept output, by output name. */
  outputs: Record<string, unknown>;
  attachments: { key: string; fileName: string; contentType: string }[];
}

export interface Workflow<Input = unknown> {
  name: string;
  version: number;
  description: string;
  /** Validates a job's input (from the CLI, the API, a manifest line). */
  input: z.ZodType<Input>;
  /** Turns a text or Markdown document into an input (for `opflow run <files>`). */
  fromText?: (text: string, fileName: string) => unknown;
  steps: Step<Input>[];
  /** The step a job starts at (default: the first), when the input decides it (e.g. llm-chat's model). */
  start?: (input: Input) => string;
  /** Deadline for a job of this workflow when the caller gives none (default 24 hours). */
  defaultDeadlineMs?: number;
  /** A readable report in Markdown: what a reader of this workflow wants first. */
  report: (r: ReportInput<Input>) => { title: string; markdown: string };
  /** A one-line summary for listings (e.g. "3 references, closest 0.82"). */
  summary?: (r: ReportInput<Input>) => string;
  /** The job's answer, kept as `answer` in result.json (e.g. a call's pages joined into one list). */
  answer?: (r: ReportInput<Input>) => unknown;
}

/** Helper for declaring a call step with the data and request types of its operation. */
export function callStep<Input, Op extends OperationId>(
  step: Omit<CallStep<Input, Op>, 'kind'>,
): CallStep<Input, Op> {
  return { kind: 'call', ...step };
}

export function streamStep<Input>(step: Omit<StreamStep<Input>, 'kind'>): StreamStep<Input> {
  return { kind: 'stream', ...step };
}

export function fetchStep<Input>(step: Omit<FetchStep<Input>, 'kind'>): FetchStep<Input> {
  return { kind: 'fetch', ...step };
}

export function defineWorkflow<Input>(workflow: Workflow<Input>): Workflow<Input> {
  return workflow;
}

export type WorkflowRegistry = ReadonlyMap<string, Workflow>;

/**
 * Step factories bound to a workflow's input type, so `ctx.input` is typed in every step and only
 * the operation is inferred: `const step = stepsFor<MyInput>(); step.call({ operation: 'ai35-1…', … })`.
 */
export function stepsFor<Input>() {
  return {
    call: <Op extends OperationId>(step: Omit<CallStep<Input, Op>, 'kind'>): CallStep<Input, Op> => ({
      kind: 'call',
      ...step,
    }),
    stream: (step: Omit<StreamStep<Input>, 'kind'>): StreamStep<Input> => ({ kind: 'stream', ...step }),
    fetch: (step: Omit<FetchStep<Input>, 'kind'>): FetchStep<Input> => ({ kind: 'fetch', ...step }),
    request: (step: Omit<RequestStep<Input>, 'kind'>): RequestStep<Input> => ({ kind: 'request', ...step }),
  };
}
