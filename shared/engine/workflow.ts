/**
 * How a workflow is declared: its steps in order, each naming the operation it calls, what it takes
 * from the job, what it keeps, and how it decides done / poll again / ask a person. Everything here
 * is data plus small pure functions; the step runner does the I/O.
 *
 * Steps are linked by handles, not strings: a step definition is itself the handle of the data it
 * keeps (`needs: [summary]`, `ctx.output(summary)` typed as the operation's response data), and a
 * value kept in the job's context is read and written through a `ContextKey` (`ctx.get(taskId)`,
 * `taskId.set(id)`). A decision names the step to go to by its handle (`{ type: 'next', step: summary }`),
 * as do a fetch step's `refreshFrom` and a workflow's `start`. Handles carry the names persisted in job
 * records and the report store, which never change once a workflow has run: jobs under way in an
 * existing database resume. The step factories turn what a workflow declares (handles) into what the
 * engine runs and records (those names), so a recorded decision reads the same as before handles.
 */
import * as z from 'zod';
import { catalogue, type OperationEffect, type OperationId } from '../openplatform/catalogue';
import { findCatalogueOperation } from '../openplatform/operations';
import type { RequestOf } from '../openplatform/schemas/requests';
import { type DataOf, responseDataSchemas } from '../openplatform/schemas/responses';
import type {
  OperationRequest,
  StreamOperationId,
  StreamReference,
  StreamResult,
} from '../openplatform/types';
import type { Job, SelectionOption } from './job-record';
import type { PollPolicy, RetryPolicy } from './policies';

/** Brands a handle with its workflow's name (type only), so a handle of another workflow is a type error. */
declare const ofWorkflow: unique symbol;
interface Branded<W extends string> {
  readonly [ofWorkflow]?: W;
}

/**
 * A step as other steps name it (`ctx.chosen(features)`, `{ type: 'next', step: summary }`,
 * `refreshFrom: report`). `name` is persisted in job records: never renamed.
 */
export interface StepHandle<W extends string = string> extends Branded<W> {
  readonly name: string;
}

/**
 * The data a step keeps, as later steps name it: the step definition itself (`needs: [summary]`,
 * `ctx.output(summary)`). `name` is the name it is kept under, persisted in the report store.
 */
export interface OutputHandle<Data, W extends string = string> extends StepHandle<W> {
  /** A kept value read back as the step's data (through a lenient schema), or undefined when it is not. */
  readOutput(value: unknown): Data | undefined;
}

/**
 * A small value kept in the job's context between steps (an upstream task id, a cursor), under
 * `key`, which is persisted in job records: never renamed.
 */
export interface ContextKey<Value, W extends string = string> extends Branded<W> {
  readonly key: string;
  /** The value kept in `context`, or undefined when absent or not of this key's type. */
  read(context: Record<string, unknown>): Value | undefined;
  /** `{ [key]: value }`, for a decision's `context`: `{ type: 'next', context: taskId.set(id) }`. */
  set(value: Value): Record<string, unknown>;
}

/** A context key whose values `schema` checks when they are read back from the job record. */
export function contextKey<Value, W extends string = string>(
  key: string,
  schema: z.ZodType<Value>,
): ContextKey<Value, W> {
  return {
    key,
    read: (context) => {
      const parsed = schema.safeParse(context[key]);
      return parsed.success ? parsed.data : undefined;
    },
    set: (value) => ({ [key]: value }),
  };
}

/** The plain data of a step context, as the runner loads it. */
export interface StepContextData<Input = unknown> {
  job: Job;
  input: Input;
  /** Small values kept between steps (upstream ids, cursors), by key. */
  context: Record<string, unknown>;
  /** Option ids chosen at each selection point, by step name. */
  selections: Record<string, string[]>;
  /** The data of earlier steps this step declared in `needs`, by output name. */
  outputs: Record<string, unknown>;
  now: number;
}

/**
 * What a step's functions see: the job's data, and typed readers of what earlier steps of the same
 * workflow kept (method syntax on purpose: a step of one workflow fits in the registry's lists).
 */
export interface StepContext<Input = unknown, W extends string = string> extends StepContextData<Input> {
  /** The data `step` kept; the step must be in this step's `needs` (else an error names it). */
  output<Data>(step: OutputHandle<Data, W>): Data;
  /** The context value under `key`, or an error naming the key (a workflow wiring mistake). */
  get<Value>(key: ContextKey<Value, W>): Value;
  /** The context value under `key`, or undefined when absent (or not of the key's type). */
  find<Value>(key: ContextKey<Value, W>): Value | undefined;
  /** The option ids chosen at selection step `step` (empty when it offered nothing). */
  chosen(step: StepHandle<W>): Set<string>;
}

/** A step context over the runner's data (also what tests and input checks build). */
export function stepContext<Input, W extends string = string>(
  data: StepContextData<Input>,
): StepContext<Input, W> {
  return {
    ...data,
    output<Data>(step: OutputHandle<Data, W>): Data {
      const value = data.outputs[step.name];
      if (value === undefined || value === null) {
        throw new Error(`the output of step "${step.name}" is missing; declare it in \`needs\``);
      }
      const read = step.readOutput(value);
      if (read === undefined) throw new Error(`the kept output of step "${step.name}" is not its data`);
      return read;
    },
    get<Value>(key: ContextKey<Value, W>): Value {
      const value = key.read(data.context);
      if (value === undefined) throw new Error(`the job context has no "${key.key}"`);
      return value;
    },
    find: <Value>(key: ContextKey<Value, W>) => key.read(data.context),
    chosen: (step: StepHandle<W>) => new Set(data.selections[step.name] ?? []),
  };
}

export interface SelectionOffer {
  prompt: string;
  options: SelectionOption[];
  /** Fewest and most options that may be chosen (defaults 1 and all). */
  min?: number;
  max?: number;
}

/**
 * What a step decides after its call, as its `decide` returns it: the step to go to is a handle of
 * the same workflow (`{ type: 'next', step: summary }`).
 */
export type Decision<W extends string = string> =
  /** Done with this step: go to `step` (default: the next one in order), keeping `context` changes. */
  | { type: 'next'; step?: StepHandle<W>; context?: Record<string, unknown> }
  /** The upstream is still working: poll again per the step's poll policy. */
  | { type: 'poll'; context?: Record<string, unknown> }
  /** Offer options: `auto` takes the preselected ones (or all), `manual` asks a person. */
  | { type: 'select'; offer: SelectionOffer; step?: StepHandle<W>; context?: Record<string, unknown> }
  /** The workflow is finished: render the report. */
  | { type: 'complete'; context?: Record<string, unknown> }
  /** The upstream reported the task as failed (not retryable). */
  | { type: 'fail'; message: string; code?: number };

/**
 * A decision as the engine applies and records it (in a job's `unsaved` answer): the step to go to
 * by its persisted name. Recorded decisions of jobs written before handles have this form.
 */
export type StepDecision =
  | { type: 'next'; step?: string; context?: Record<string, unknown> }
  | { type: 'poll'; context?: Record<string, unknown> }
  | { type: 'select'; offer: SelectionOffer; step?: string; context?: Record<string, unknown> }
  | { type: 'complete'; context?: Record<string, unknown> }
  | { type: 'fail'; message: string; code?: number };

/** A step's decision with the step to go to by its persisted name, as the engine records it. */
export function recordedDecision(decision: Decision): StepDecision {
  if ((decision.type === 'next' || decision.type === 'select') && decision.step !== undefined) {
    return { ...decision, step: decision.step.name };
  }
  return decision as StepDecision;
}

interface StepBase<Input, W extends string> {
  /** The step's name, persisted in job records (and the default output name): never renamed. */
  readonly name: string;
  /** Earlier steps whose kept data this step reads with `ctx.output` (loaded from the report store). */
  needs?: readonly OutputHandle<unknown, W>[];
  /**
   * Overrides of the retry policy. Default: the catalogue's, by the operation's effect (a create or
   * update gets `createRetryPolicy`, a read `defaultRetryPolicy`).
   */
  retry?: Partial<RetryPolicy>;
  poll?: Partial<PollPolicy>;
  /**
   * The name its data is kept under (default: the step name); a loop gives each round its own. Such
   * a step cannot be in another step's `needs` (the report reads its rounds by name).
   */
  outputName?: (ctx: StepContext<Input, W>) => string;
  /** Keep the step's data in the report store and result.json (default true). */
  keep?: boolean;
  /** A short line for progress displays, e.g. "agent search". Default: the step name. */
  title?: string;
  /**
   * The job does not depend on this step (extra data for the report): when it fails for good (an
   * error not retried or its attempts used up, the quota exhausted, a `fail` decision), the job goes
   * on with the next step and keeps why in its context (`skippedSteps(context)`). Not the last step.
   */
  optional?: boolean;
  /** What `opflow workflows <name>` says of the step's call besides its operation (cost, when it is left out). */
  note?: string;
  /**
   * Left out by the job's input or state: a reason (e.g. `"legalData" is false`) skips the step
   * without a call, token or cost; undefined runs it. However the job reaches the step (in order,
   * by a decision, after an optional step failed), the runner asks this first, and a skipped step
   * is kept under `skippedSteps` (kind `skipped`) and shown on the job's timeline. Not the last step.
   */
  skipWhen?: (state: SkipContext<Input, W>) => string | undefined;
}

/** What a `skipWhen` predicate reads: the job's input and state, not the kept outputs of steps. */
export type SkipContext<Input = unknown, W extends string = string> = Omit<
  StepContext<Input, W>,
  'output' | 'outputs'
>;

/** The kind a step left out by its `skipWhen` is kept under in `skippedSteps` (not a failure). */
export const skippedByInput = 'skipped';

/**
 * The steps of `workflow` its `skipWhen` predicates leave out in the job's present input and state,
 * with their reasons, by step name (empty when none).
 */
export function stepsLeftOut<Input>(
  workflow: Workflow<Input>,
  state: Omit<StepContextData<Input>, 'outputs'>,
): Record<string, string> {
  const view = stepContext({ ...state, outputs: {} });
  const reasons: Record<string, string> = {};
  for (const step of workflow.steps) {
    const reason = step.skipWhen?.(view);
    if (reason !== undefined) reasons[step.name] = reason;
  }
  return reasons;
}

/** Why an optional step was skipped, as kept in the job's context. */
export interface SkippedStep {
  kind: string;
  message: string;
  httpStatus?: number | undefined;
  operationId?: string | undefined;
  at: number;
  /** The version of the job's change that skipped it (its history event). */
  version?: number | undefined;
}

/** The context key optional steps' failures are kept under (persisted: never renamed). */
export const skippedStepsKey = 'skippedSteps';

/** Built on first use (`z.lazy`), as the workflows' schemas are: not at every cold start. */
const skippedStepSchema = z.lazy(() =>
  z.looseObject({
    kind: z.string(),
    message: z.string(),
    httpStatus: z.number().optional(),
    operationId: z.string().optional(),
    at: z.number(),
    version: z.number().optional(),
  }),
);

/** The optional steps a job skipped, by step name, with why (empty when none). */
export function skippedSteps(context: Record<string, unknown>): Record<string, SkippedStep> {
  const parsed = z.record(z.string(), skippedStepSchema).safeParse(context[skippedStepsKey]);
  return parsed.success ? parsed.data : {};
}

export interface CallStep<Input, Op extends OperationId = OperationId, W extends string = string>
  extends StepBase<Input, W>,
    OutputHandle<DataOf<Op>, W> {
  kind: 'call';
  operation: Op;
  // Method syntax on purpose: a step of one operation must fit in a list of steps of any operation.
  request(ctx: StepContext<Input, W>): RequestOf<Op>;
  decide(data: DataOf<Op>, ctx: StepContext<Input, W>): StepDecision;
}

/**
 * How a streamed answer is kept: the stream result without its usage (the runner keeps usage).
 * Built on first use (`z.lazy`): only a stream step's job reads it.
 */
export const streamOutputSchema = z.lazy(() =>
  z.looseObject({
    text: z.string().catch(''),
    references: z.array(z.looseObject({})).catch([]),
    finishReason: z.string().catch(''),
    ids: z.record(z.string(), z.string()).catch({}),
    tokens: z
      .looseObject({ input: z.number(), output: z.number(), total: z.number() })
      .optional()
      .catch(undefined),
  }),
);
export type StreamOutput = z.infer<typeof streamOutputSchema> & { references: StreamReference[] };

/** A kept stream result read back, or undefined when it is not one. */
export function readStreamOutput(value: unknown): StreamOutput | undefined {
  if (value === undefined || value === null) return undefined;
  const parsed = streamOutputSchema.safeParse(value);
  return parsed.success ? (parsed.data as StreamOutput) : undefined;
}

export interface StreamStep<Input, W extends string = string>
  extends StepBase<Input, W>,
    OutputHandle<StreamOutput, W> {
  kind: 'stream';
  operation: StreamOperationId;
  request: (ctx: StepContext<Input, W>) => RequestOf<StreamOperationId>;
  decide: (result: Omit<StreamResult, 'usage'>, ctx: StepContext<Input, W>) => StepDecision;
}

/**
 * A call of any catalogue operation, named by the job (the `call` workflow): the operation is known
 * only at run time, so its effect (create or read) is looked up then, and its data is untyped.
 */
export interface RequestStep<Input, W extends string = string>
  extends StepBase<Input, W>,
    OutputHandle<unknown, W> {
  kind: 'request';
  /** Never set: the operation comes from `operationOf` (kept so `step.operation` reads uniformly). */
  operation?: undefined;
  /** The operationId or short id this job calls. */
  operationOf: (ctx: StepContext<Input, W>) => string;
  request: (ctx: StepContext<Input, W>) => OperationRequest;
  decide: (data: unknown, ctx: StepContext<Input, W>) => StepDecision;
}

/** Download a document the upstream links to, so opflow keeps its own copy (an attachment, not data). */
export interface FetchStep<Input, W extends string = string> extends StepBase<Input, W>, StepHandle<W> {
  kind: 'fetch';
  url: (ctx: StepContext<Input, W>) => string;
  /** The attachment's file name in the report folder (default: the name the server gives). */
  fileName?: (ctx: StepContext<Input, W>, serverName: string) => string;
  /** When the link has expired, go back to this step (by its persisted name) to get a fresh one. */
  refreshFrom?: string;
  decide?: (
    attachment: { key: string; fileName: string; contentType: string },
    ctx: StepContext<Input, W>,
  ) => StepDecision;
}

// biome-ignore lint/suspicious/noExplicitAny: workflows of any input live in one registry
export type Step<Input = any, W extends string = string> =
  | CallStep<Input, OperationId, W>
  | StreamStep<Input, W>
  | FetchStep<Input, W>
  | RequestStep<Input, W>;

/**
 * Whether a step's call only reads (safe to repeat) or may create or change something upstream,
 * from the catalogue. A `call` job's operation is known only at run time: `operationId` names it;
 * unknown, the careful answer (`create`).
 */
export function stepEffect(step: Step, operationId?: string): OperationEffect {
  if (step.kind === 'fetch') return 'read';
  if (step.kind !== 'request') return catalogue[step.operation as OperationId].effect;
  return (operationId && findCatalogueOperation(operationId)?.effect) || 'create';
}

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

/** One entry of a list a scheduled run is compared by: what identifies it between runs, and a readable line. */
export interface DigestEntry {
  /** What identifies the entry between runs (a publication number, a title, a link). */
  id: string;
  /** A short readable description. */
  text: string;
}

/**
 * What a finished job of a workflow is compared by with the previous run of its schedule (the
 * report's "Changes since" section): lists whose entries come and go, named numbers, the answer.
 * The report's sections are compared for every workflow without a hook.
 */
export interface WorkflowDigest {
  /** Lists, in the order the report shows their changes (references, solutions...). */
  lists?: { kind: string; entries: DigestEntry[] }[];
  /** Named numbers (a patent count's total); a schedule of such a workflow charts their series. */
  counts?: { name: string; value: number }[];
  /** The answer (of a Q&A or a chat): its hash, length and beginning. Default: from `answer`. */
  answer?: { hash: string; length: number; excerpt: string };
}

/** A finished job's key findings, as a batch's summary.csv shows them beside its `summary`. */
export interface BatchFindings {
  /** How many references (or, for a count, the count). */
  references?: string;
  /** The closest reference's id, its score on the report's scale, and the features it matches. */
  closest?: string;
  closestScore?: string;
  featuresMatched?: string;
  /** The conclusion in one sentence (a novelty verdict, an FTO recommendation). */
  verdict?: string;
  /** Prior-art references by citation category (X: alone, Y: in combination, A: background). */
  categories?: { X: number; Y: number; A: number };
  /** The closest references, most relevant first (ids, a few at most). */
  closestReferences?: string[];
  /**
   * The workflow's detail, one row per thing its reader checks (a reference, a patent): the batch
   * workbook's sheet for this workflow. Keys are the column headers, in the order of the first row.
   */
  detail?: Record<string, string | number>[];
}

/** What a batch's findings hook reads: a finished job's result.json. */
export interface FindingsSource {
  /** Its kept outputs by step name (result.json's `steps`). */
  steps: Record<string, unknown>;
  /** The job's input and its answers at selection points. */
  input?: unknown;
  selections?: Record<string, string[]>;
  /** The job's context (what its steps recorded beside their outputs). */
  context?: Record<string, unknown>;
}

/**
 * A workflow: its input, steps and report, plus the hooks the rest of opflow reads (its example,
 * its own names of the common fields, what a schedule compares, what a batch lists). Everything
 * opflow knows of a workflow is here: nothing else is keyed by its name.
 */
export interface Workflow<Input = unknown> {
  name: string;
  version: number;
  description: string;
  /** Validates a job's input (from the CLI, the API, a manifest line). */
  input: z.ZodType<Input>;
  /**
   * An input that works (`opflow workflows <name>`, the docs, the dashboard's form). Every workflow
   * of the registry has one, checked against `input` by test/unit/workflows/examples.test.ts.
   */
  example?: Record<string, unknown>;
  /**
   * The workflow's own names of the common fields (`text`, the main input; `lang`, its language),
   * e.g. `{ text: 'question' }`: the API, the CLI, manifests and MCP accept both names.
   */
  commonNames?: Readonly<Record<string, string>>;
  /** False when the workflow takes no document (`text`), so no document-only input fits it. Default true. */
  takesDocument?: boolean;
  /** Turns a text or Markdown document into an input (for `opflow run <files>`). */
  fromText?: (text: string, fileName: string) => unknown;
  /** Turns an image file (PNG or JPEG, for `opflow run <files>`) into an input; absent when the workflow takes no images. */
  fromImage?: (bytes: Uint8Array, fileName: string) => unknown;
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
  /** What a scheduled run is compared by with the previous one (default: the report's sections and `answer`). */
  digest?: (r: ReportInput<Input>) => WorkflowDigest;
  /**
   * Key findings for a batch's summary.csv and workbook, from result.json (its kept outputs by step
   * name, the input and the selections).
   */
  findings?: (result: FindingsSource) => BatchFindings;
}

/** The kept data of `operation` read back through its lenient response schema. */
function operationReader<Op extends OperationId>(operation: Op): (value: unknown) => DataOf<Op> | undefined {
  return (value) => {
    if (value === undefined || value === null) return undefined;
    const parsed = responseDataSchemas[operation].safeParse(value);
    return parsed.success ? (parsed.data as DataOf<Op>) : undefined;
  };
}

/**
 * What a workflow declares of a step: the engine's step without what the factory adds, its
 * `decide` naming the step to go to by handle.
 */
type Declared<S, Result, Input, W extends string> = Omit<S, 'kind' | 'readOutput' | 'decide'> & {
  decide(result: Result, ctx: StepContext<Input, W>): Decision<W>;
};
export type CallStepDeclaration<Input, Op extends OperationId, W extends string = string> = Declared<
  CallStep<Input, Op, W>,
  DataOf<Op>,
  Input,
  W
>;
export type StreamStepDeclaration<Input, W extends string = string> = Declared<
  StreamStep<Input, W>,
  Omit<StreamResult, 'usage'>,
  Input,
  W
>;
export type RequestStepDeclaration<Input, W extends string = string> = Declared<
  RequestStep<Input, W>,
  unknown,
  Input,
  W
>;
export type FetchStepDeclaration<Input, W extends string = string> = Omit<
  FetchStep<Input, W>,
  'kind' | 'decide' | 'refreshFrom'
> & {
  /** When the link has expired, go back to this step to get a fresh one. */
  refreshFrom?: StepHandle<W>;
  decide?: (
    attachment: { key: string; fileName: string; contentType: string },
    ctx: StepContext<Input, W>,
  ) => Decision<W>;
};

/** Helper for declaring a call step with the data and request types of its operation. */
export function callStep<Input, Op extends OperationId, W extends string = string>(
  step: CallStepDeclaration<Input, Op, W>,
): CallStep<Input, Op, W> {
  const { decide, ...rest } = step;
  return {
    kind: 'call',
    ...rest,
    readOutput: operationReader(step.operation),
    decide: (data, ctx) => recordedDecision(decide(data, ctx)),
  };
}

export function streamStep<Input, W extends string = string>(
  step: StreamStepDeclaration<Input, W>,
): StreamStep<Input, W> {
  const { decide, ...rest } = step;
  return {
    kind: 'stream',
    ...rest,
    readOutput: readStreamOutput,
    decide: (result, ctx) => recordedDecision(decide(result, ctx)),
  };
}

export function fetchStep<Input, W extends string = string>(
  step: FetchStepDeclaration<Input, W>,
): FetchStep<Input, W> {
  const { decide, refreshFrom, ...rest } = step;
  return {
    kind: 'fetch',
    ...rest,
    ...(refreshFrom && { refreshFrom: refreshFrom.name }),
    ...(decide && { decide: (attachment, ctx) => recordedDecision(decide(attachment, ctx)) }),
  };
}

export function requestStep<Input, W extends string = string>(
  step: RequestStepDeclaration<Input, W>,
): RequestStep<Input, W> {
  const { decide, ...rest } = step;
  return {
    kind: 'request',
    ...rest,
    readOutput: (value) => value ?? undefined,
    decide: (data, ctx) => recordedDecision(decide(data, ctx)),
  };
}

/** What a workflow file declares: the step a job starts at is a handle. */
export interface WorkflowDeclaration<Input = unknown> extends Omit<Workflow<Input>, 'start'> {
  /** The step a job starts at (default: the first), when the input decides it (e.g. llm-chat's model). */
  start?: (input: Input) => StepHandle;
}

/**
 * A workflow, checked as it is declared: step names unique, every `needs` entry one of its own
 * steps that keeps its data under its own name, every `refreshFrom` one of its steps. A wiring
 * mistake the type checker cannot see (a cast) fails when the module loads, not when a job reaches
 * the step.
 */
export function defineWorkflow<Input>(declared: WorkflowDeclaration<Input>): Workflow<Input> {
  const { start, ...rest } = declared;
  const workflow: Workflow<Input> = { ...rest, ...(start && { start: (input: Input) => start(input).name }) };
  const problems = workflowProblems(workflow);
  if (problems.length > 0) throw new Error(`workflow ${workflow.name}: ${problems.join('; ')}`);
  return workflow;
}

/** What is wrong with a workflow's wiring (empty when nothing). */
export function workflowProblems<Input>(workflow: Workflow<Input>): string[] {
  const problems: string[] = [];
  const byName = new Map<string, Step<Input>>();
  for (const step of workflow.steps) {
    if (byName.has(step.name)) problems.push(`two steps are named "${step.name}"`);
    byName.set(step.name, step);
  }
  for (const step of workflow.steps) {
    for (const need of step.needs ?? []) {
      const needed = byName.get(need.name);
      if (!needed || !Object.is(needed, need)) {
        problems.push(`step "${step.name}" needs "${need.name}", which is not one of its steps`);
      } else if (needed.kind === 'fetch' || needed.keep === false || needed.outputName) {
        problems.push(`step "${step.name}" needs "${need.name}", which keeps no data under its name`);
      }
    }
    if (step.optional && step === workflow.steps.at(-1)) {
      problems.push(`step "${step.name}" is optional, so it cannot be the last step`);
    }
    if (step.skipWhen && step === workflow.steps.at(-1)) {
      problems.push(`step "${step.name}" may be skipped (skipWhen), so it cannot be the last step`);
    }
    if (step.kind === 'fetch' && step.refreshFrom !== undefined && !byName.has(step.refreshFrom)) {
      problems.push(
        `step "${step.name}" refreshes from "${step.refreshFrom}", which is not one of its steps`,
      );
    }
  }
  return problems;
}

export type WorkflowRegistry = ReadonlyMap<string, Workflow>;

/**
 * The step and context-key factories of one workflow, typed by its input schema and branded with
 * its name: `const step = stepsFor(name, noveltyCheckInput)`. `ctx.input` is typed in
 * every step, each factory returns the step, which is also the handle later steps read its data by
 * (`needs: [summary]`, `ctx.output(summary)`), and a handle of another workflow is a type error.
 */
export function stepsFor<const W extends string, Input>(_workflow: W, _input: z.ZodType<Input>) {
  return {
    call: <Op extends OperationId>(step: CallStepDeclaration<Input, Op, W>): CallStep<Input, Op, W> =>
      callStep<Input, Op, W>(step),
    stream: (step: StreamStepDeclaration<Input, W>): StreamStep<Input, W> => streamStep(step),
    fetch: (step: FetchStepDeclaration<Input, W>): FetchStep<Input, W> => fetchStep(step),
    request: (step: RequestStepDeclaration<Input, W>): RequestStep<Input, W> => requestStep(step),
    /** A value kept in the job's context under `key` (persisted: never renamed), checked by `schema`. */
    key: <Value>(key: string, schema: z.ZodType<Value>): ContextKey<Value, W> =>
      contextKey<Value, W>(key, schema),
  };
}
