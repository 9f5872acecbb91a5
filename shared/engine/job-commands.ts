/**
 * Starting, answering and cancelling jobs: the commands behind `opflow run/resume/cancel` and the
 * job API. Each validates what it is given and says clearly what is wrong.
 */
import { ulid } from 'ulid';
import * as z from 'zod';
import { CallbackUrlRefused, checkCallbackUrl } from '../callbacks/ssrf-guard';
import { formatIssues, type IssueAt, issueList } from '../errors/zod-issues';
import { didYouMean } from '../openplatform/closest-name';
import { applySelection, SelectionRefused } from './advance';
import type { JobDeps } from './deps';
import {
  emptyUsage,
  isTerminal,
  type Job,
  type JobSource,
  jobPrioritySchema,
  jobSources,
  type SelectionPolicy,
  selectionPolicySchema,
} from './job-record';
import { inputKey } from './report';
import {
  type AnswerOrigin,
  labelsOf,
  openConfirmations,
  reviewOfOffer,
  type SelectionAnswer,
  sameApprover,
} from './review-record';

/** Inputs larger than this (as JSON) are kept in the report store, not in the job record. */
export const inlineInputLimitBytes = 32 * 1024;
const defaultDeadlineMs = 24 * 60 * 60_000;
/** The longest deadline a job may be given: a year (longer ones are typing slips, and break dates). */
export const maxDeadlineMs = 366 * 24 * 60 * 60_000;

/** A tenant's name, the same at every entry point (run, ingest, the job API, MCP, the aws inbox). */
export const tenantNameSchema = z
  .string()
  .min(1, 'the tenant name is empty')
  .max(64, 'at most 64 characters')
  .regex(/^[\w.-]+$/, 'letters, digits, dot, dash and underscore only');

/** A cap of billed units: a whole number from 1. */
export const maxUnitsSchema = z
  .number({ error: 'must be a whole number of billed units from 1' })
  .int('must be a whole number of billed units from 1')
  .min(1, 'must be a whole number of billed units from 1')
  .max(1e12, 'must be at most 1000000000000');

export const submitJobRequestSchema = z.object({
  workflow: z.string().min(1),
  input: z.unknown(),
  tenant: tenantNameSchema.default('default'),
  selection: selectionPolicySchema.default({ mode: 'auto' }),
  /** Milliseconds from now; default: the workflow's (24 hours unless it says otherwise). */
  deadlineMs: z
    .number()
    .int()
    .positive()
    .max(maxDeadlineMs, `must be at most ${maxDeadlineMs} (366 days)`)
    .optional(),
  label: z.string().max(200).optional(),
  /** Kept with the job, never sent upstream (a disclosure form's docket id, inventors, dates...). */
  metadata: z
    .record(z.string().max(100), z.union([z.string().max(2000), z.array(z.string().max(500)).max(100)]))
    .optional(),
  batchId: z.string().max(100).optional(),
  /** How urgent the job is against its key's other work: `high`, `normal` (default) or `low`. */
  priority: jobPrioritySchema.optional(),
  /** The most billed units the job may spend; it stops before its next step once they are reached. */
  maxUnits: maxUnitsSchema.optional(),
  /** Set by a schedule or webhook source (never by a caller): the caps its `maxUnits` came from. */
  costCap: z
    .strictObject({
      owner: z.enum(['schedule', 'webhook source']),
      name: z.string().min(1).max(200),
      maxUnitsPerRun: maxUnitsSchema.optional(),
      maxUnitsPerDay: maxUnitsSchema.optional(),
      spentToday: z.number().int().min(0).optional(),
      dayFreesAt: z.number().int().min(0).optional(),
    })
    .optional(),
  source: z.enum(jobSources).default('cli'),
  idempotencyKey: z.string().min(1).max(200).optional(),
  callbackUrl: z.url().optional(),
});
export type SubmitJobRequest = z.input<typeof submitJobRequestSchema>;

/**
 * Why the engine refuses a request: `invalid` (what was asked cannot be, e.g. a bad input),
 * `not-found` (no such job or batch), `conflict` (not in the state that allows it, or changed
 * meanwhile). The engine knows nothing of HTTP: shared/http maps a reason to a status, the CLI to
 * an exit code.
 */
export type JobRequestRefusal = 'invalid' | 'not-found' | 'conflict';

/** A request the engine refuses, with what is wrong and where, and why (`reason`). */
export class JobRequestError extends Error {
  override readonly name = 'JobRequestError';
  constructor(
    message: string,
    readonly reason: JobRequestRefusal = 'invalid',
    /** Each field of the request at fault (`input.text`) and what is wrong with it, when known. */
    readonly issues?: readonly IssueAt[] | undefined,
  ) {
    super(message);
  }
}

/** The refusal of a workflow name that is not known, with the nearest known one. */
function unknownWorkflow(name: string, known: string[]): JobRequestError {
  return new JobRequestError(
    `unknown workflow "${name}"${didYouMean(name, known)}; known workflows: ${known.join(', ')}`,
  );
}

/** The input held to the workflow's schema; refused with each field at fault (`input.text`). */
function workflowInput(workflow: { name: string; input: z.ZodType }, raw: unknown): unknown {
  const input = workflow.input.safeParse(raw);
  if (input.success) return input.data;
  throw new JobRequestError(
    `invalid input for ${workflow.name}: ${formatIssues(input.error, { root: 'input' })}`,
    'invalid',
    issueList(input.error, 'input'),
  );
}

export async function submitJob(
  deps: JobDeps,
  request: SubmitJobRequest,
): Promise<{ job: Job; created: boolean }> {
  const parsed = submitJobRequestSchema.safeParse(request);
  if (!parsed.success)
    throw new JobRequestError(formatIssues(parsed.error), 'invalid', issueList(parsed.error));
  const req = parsed.data;
  const workflow = deps.workflows.get(req.workflow);
  if (!workflow) throw unknownWorkflow(req.workflow, [...deps.workflows.keys()]);
  const input = { data: workflowInput(workflow, req.input) };

  if (req.callbackUrl !== undefined) {
    if (!deps.callbacks) throw new JobRequestError('callbackUrl: callbacks are not set up on this backend');
    try {
      checkCallbackUrl(req.callbackUrl, deps.callbacks.policy);
    } catch (error) {
      if (error instanceof CallbackUrlRefused) throw new JobRequestError(error.message);
      throw error;
    }
  }

  if (req.idempotencyKey) {
    const existing = await deps.store.findByIdempotencyKey(req.tenant, req.idempotencyKey);
    if (existing) {
      // A retried request gets its job back; another request reusing the key is a mistake to report.
      const same =
        existing.workflow === workflow.name &&
        (await storedInputJson(deps, existing)) === JSON.stringify(input.data);
      if (!same) {
        throw new JobRequestError(
          `idempotency key ${JSON.stringify(req.idempotencyKey)} was used for job ${existing.id} with a different request (${existing.workflow}); use a new key for a new request`,
          'conflict',
        );
      }
      return { job: existing, created: false };
    }
  }

  const now = deps.clock.now();
  const id = ulid(now);
  // The outbox entry first: a crash before the job exists leaves an entry the sender drops; a job
  // without its entry would lose its callback.
  if (req.callbackUrl !== undefined) await deps.callbacks?.outbox.add(id, now);
  const serialized = JSON.stringify(input.data);
  let jobInput: Job['input'] = { inline: input.data };
  if (Buffer.byteLength(serialized) > inlineInputLimitBytes) {
    await deps.reports.put(inputKey(id), serialized, 'application/json');
    jobInput = { ref: inputKey(id) };
  }
  const first = workflow.start
    ? workflow.steps.find((step) => step.name === workflow.start?.(input.data))
    : workflow.steps[0];
  if (!first) throw new JobRequestError(`workflow ${workflow.name} has no step to start this input at`);
  const job: Job = {
    id,
    workflow: workflow.name,
    workflowVersion: workflow.version,
    tenant: req.tenant,
    status: 'QUEUED',
    step: first.name,
    version: 1,
    input: jobInput,
    label: req.label,
    ...(req.metadata === undefined ? {} : { metadata: req.metadata }),
    context: {},
    selection: req.selection as SelectionPolicy,
    selections: {},
    attempts: 0,
    polls: 0,
    intents: {},
    nextRunAt: now,
    deadlineAt: now + (req.deadlineMs ?? workflow.defaultDeadlineMs ?? defaultDeadlineMs),
    usage: emptyUsage(),
    outputs: [],
    batchId: req.batchId,
    ...(req.priority === undefined || req.priority === 'normal' ? {} : { priority: req.priority }),
    ...(req.maxUnits === undefined ? {} : { maxUnits: req.maxUnits }),
    ...(req.costCap === undefined ? {} : { costCap: req.costCap }),
    source: req.source as JobSource,
    idempotencyKey: req.idempotencyKey,
    callbackUrl: req.callbackUrl,
    createdAt: now,
    updatedAt: now,
  };
  const stored = await deps.store.create(job);
  if (!stored.created && req.callbackUrl !== undefined)
    await deps.callbacks?.outbox.remove({ jobId: id, dueAt: now });
  // A crash between create and send is healed by the sweeper: the job is due now.
  if (stored.created) {
    if (deps.sendFirstMessage) await deps.sendFirstMessage(deps, workflow, first, job);
    else await deps.queue.send({ jobId: job.id, version: job.version }, 0);
  }
  deps.onJobChange?.(stored.job);
  return stored;
}

/** The job's input as JSON, from its record or the report store; undefined when it cannot be read. */
async function storedInputJson(deps: JobDeps, job: Job): Promise<string | undefined> {
  if ('inline' in job.input) return JSON.stringify(job.input.inline);
  const stored = await deps.reports.get(job.input.ref);
  return stored ? Buffer.from(stored.body).toString('utf8') : undefined;
}

async function mustGet(deps: JobDeps, jobId: string): Promise<Job> {
  const job = await deps.store.get(jobId);
  if (!job) throw new JobRequestError(`no job ${jobId}`, 'not-found');
  return job;
}

/**
 * Only act on the job while it is at this version (a bulk action acts on the job it selected):
 * a job changed meanwhile is refused as a conflict, never acted on as it is now.
 */
export interface ExpectedVersion {
  expectVersion?: number | undefined;
  /**
   * The answered job's message is not sent: the caller writes the job once more first (the
   * reviewers' notice of a default taken) and then sends it for the version it leaves, so no
   * message goes stale and no step runs while the job is still being written.
   */
  holdMessage?: boolean | undefined;
}

/** The job, refused (conflict) when it is no longer at the version expected. */
export function checkExpectedVersion(job: Job, expected: ExpectedVersion): void {
  if (expected.expectVersion !== undefined && job.version !== expected.expectVersion)
    throw new JobRequestError(
      `job ${job.id} changed since it was selected (version ${job.version}, selected at ${expected.expectVersion}); look at it again`,
      'conflict',
    );
}

/** Answers kept on a job (the latest). */
const keptAnswers = 50;

/**
 * Answer a job that awaits a selection with the ids of the chosen options; `origin` says who and
 * through what (kept in `Job.answers`, shown by status, the API and the dashboard). Where the
 * job's review wants two approvers, the first confirmation is kept and the job waits on; the
 * answer applies when a second, distinct person confirms the same options (a different choice
 * becomes the new first confirmation). A default applied at the timeout needs no approver.
 */
export async function answerSelection(
  deps: JobDeps,
  jobId: string,
  selectedOptionIds: readonly string[],
  origin: AnswerOrigin = { via: 'cli' },
  expected: ExpectedVersion = {},
): Promise<Job> {
  // With an expected version there is one try: a job that changed is not the one selected.
  const tries = expected.expectVersion === undefined ? 5 : 1;
  for (let attempt = 0; attempt < tries; attempt++) {
    const job = await mustGet(deps, jobId);
    checkExpectedVersion(job, expected);
    const next = answeredJob(deps, job, selectedOptionIds, origin);
    if (await deps.store.commit(next, job.version)) {
      deps.onJobChange?.(next);
      if (next.status !== 'AWAITING_INPUT' && !expected.holdMessage)
        await deps.queue.send(
          { jobId: next.id, version: next.version },
          Math.max(0, next.nextRunAt - deps.clock.now()),
        );
      return next;
    }
  }
  throw new JobRequestError(`job ${jobId} changed while answering; look at it again`, 'conflict');
}

/** The job with the answer applied, or with a first approver's confirmation kept. */
function answeredJob(deps: JobDeps, job: Job, chosenIds: readonly string[], origin: AnswerOrigin): Job {
  const workflow = deps.workflows.get(job.workflow);
  if (!workflow)
    throw new JobRequestError(`job ${job.id} belongs to unknown workflow "${job.workflow}"`, 'conflict');
  const now = deps.clock.now();
  let applied: Job;
  try {
    applied = applySelection(workflow, job, chosenIds, now);
  } catch (error) {
    if (error instanceof SelectionRefused)
      throw new JobRequestError(error.message, job.status === 'AWAITING_INPUT' ? 'invalid' : 'conflict');
    throw error;
  }
  const by = origin.by?.trim() || undefined;
  const answer: SelectionAnswer = {
    version: job.version + 1,
    via: origin.via,
    ...(by ? { by } : {}),
    step: job.pending!.step,
    options: [...chosenIds],
    labels: labelsOf(chosenIds, job.pending!.options),
    at: now,
  };
  // The review the pass recorded, or, before its first notice, the rule that will apply.
  const approvals = reviewOfOffer(job.review, job.pending)
    ? job.review.approvals
    : (deps.reviewApprovals?.(job) ?? 1);
  const first = openConfirmations(job).at(-1);
  if (approvals > 1 && origin.via !== 'timeout') {
    if (by === undefined)
      throw new JobRequestError(
        'this selection needs two approvers: say who you are (opflow resume --by, or "by" in the body)',
      );
    if (first === undefined || !sameOptions(first.options, chosenIds)) {
      const kept = { ...answer, applied: false };
      return {
        ...job,
        version: job.version + 1,
        updatedAt: now,
        answers: [...(job.answers ?? []), kept].slice(-keptAnswers),
      };
    }
    if (sameApprover(first.by, by))
      throw new JobRequestError(
        `${by} has confirmed this selection already; a second person must confirm it`,
        'conflict',
      );
  }
  return { ...applied, answers: [...(job.answers ?? []), answer].slice(-keptAnswers) };
}

function sameOptions(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
}

/** Cancel a job in any non-terminal status. */
export async function cancelJob(deps: JobDeps, jobId: string, expected: ExpectedVersion = {}): Promise<Job> {
  // With an expected version there is one try: a job that changed is not the one selected.
  const tries = expected.expectVersion === undefined ? 5 : 1;
  for (let attempt = 0; attempt < tries; attempt++) {
    const job = await mustGet(deps, jobId);
    checkExpectedVersion(job, expected);
    if (isTerminal(job.status))
      throw new JobRequestError(`job ${jobId} is already ${job.status}`, 'conflict');
    const now = deps.clock.now();
    const next: Job = {
      ...job,
      status: 'CANCELLED',
      version: job.version + 1,
      updatedAt: now,
      finishedAt: now,
      pending: undefined,
      expiresAt: Math.floor(now / 1000) + 30 * 24 * 3600,
    };
    if (await deps.store.commit(next, job.version)) {
      deps.onJobChange?.(next);
      return next;
    }
  }
  throw new JobRequestError(
    expected.expectVersion === undefined
      ? `job ${jobId} keeps changing; try cancelling again`
      : `job ${jobId} changed while cancelling; look at it again`,
    'conflict',
  );
}
