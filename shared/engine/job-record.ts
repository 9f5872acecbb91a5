/**
 * The job record: one small state machine per workflow run, kept in one record of the JobStore.
 * Everything a step needs is here or behind a pointer into the ReportStore; queue messages carry
 * only `{jobId, version}`.
 */
import * as z from 'zod';
import type { CallbackDelivery } from './callback-record';
import type { ReviewState, SelectionAnswer } from './review-record';
import type { UpstreamIdentity } from './upstream-identity';
import type { StepDecision } from './workflow';

export const jobStatuses = [
  'QUEUED',
  'RUNNING',
  'WAITING',
  'AWAITING_INPUT',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
] as const;
export type JobStatus = (typeof jobStatuses)[number];

export const terminalStatuses: ReadonlySet<JobStatus> = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);
/**
 * Statuses whose job is due to run again at `nextRunAt`. An AWAITING_INPUT job waits for a person;
 * its `nextRunAt` is its deadline, so the sweeper brings it back only to fail it when time is up.
 */
export const schedulableStatuses: ReadonlySet<JobStatus> = new Set([
  'QUEUED',
  'RUNNING',
  'WAITING',
  'AWAITING_INPUT',
]);

export function isTerminal(status: JobStatus): boolean {
  return terminalStatuses.has(status);
}

/**
 * How urgent a job is, against the other work of its API key. `high`: its calls go ahead of every
 * other waiting call at the key's next free token (an attorney's single check beside a 10,000-line
 * batch); `normal` (the default, kept as no field); `low`: its calls stand back behind every
 * other call, as a new job's first call does. Admission reads it (admission/priority.ts).
 */
export const jobPriorities = ['high', 'normal', 'low'] as const;
export type JobPriority = (typeof jobPriorities)[number];
export const jobPrioritySchema = z.enum(jobPriorities, {
  error: `must be one of ${jobPriorities.join(', ')}`,
});

export const jobSources = ['cli', 'api', 'webhook', 'schedule', 'bulk'] as const;
export type JobSource = (typeof jobSources)[number];

export const selectionPolicySchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('auto') }),
  z.object({ mode: z.literal('manual') }),
]);
export type SelectionPolicy = z.infer<typeof selectionPolicySchema>;

/**
 * What kind of failure a job error is. The upstream's kinds (`OpenPlatformErrorKind`: auth, throttled,
 * server, ...) come first; then the engine's own: `deadline` (the job passed its deadline),
 * `definition` (the workflow has no such step or cannot go on), `poll-timeout` (a task never finished
 * within its poll schedule), `upstream-failed` (the platform finished a task as failed), `storage`
 * (an answer could not be kept), `key-source` (the API key could not be read), `message-budget` (the job used up its queue messages),
 * `record-too-large` (the job's record outgrew what its store holds in one item), `cost-cap` (its billed
 * units reached the job's `maxUnits`: it stopped before its next step) and `internal` (a bug).
 * Callers (retry, reports, the job API) decide on the kind, never on the message.
 */
export const failureKinds = [
  'auth',
  'forbidden',
  'not-found',
  'invalid-request',
  'throttled',
  'quota-exhausted',
  'busy',
  'server',
  'network',
  'timeout',
  'protocol',
  'deadline',
  'definition',
  'poll-timeout',
  'upstream-failed',
  'storage',
  'key-source',
  'message-budget',
  'record-too-large',
  'cost-cap',
  'internal',
] as const;
export type FailureKind = (typeof failureKinds)[number];

/** Why a job failed, or what the last failed attempt was: enough to decide whether to retry. */
export interface JobError {
  step: string;
  operationId?: string | undefined;
  kind: FailureKind;
  code?: number | undefined;
  message: string;
  retryable: boolean;
  httpStatus?: number | undefined;
  correlationId?: string | undefined;
  at: number;
}

export interface JobUsage {
  calls: number;
  failedCalls: number;
  throttledCalls: number;
  billedUnits: number;
  tokens: number;
  /** Time spent in upstream calls, in milliseconds. */
  callMs: number;
  /**
   * Create operations sent again for the same step, each a paid repeat: after a crash or a lost
   * answer, or by a retry (a task the platform failed or no longer knows, a run from the start).
   */
  duplicateCreates: number;
  /**
   * Billed reads (a poll, a count) sent again because a process died, or was taken over, between
   * the read and the commit of its outcome: each a paid repeat. Absent while there is none (and in
   * records written before it was counted).
   */
  duplicateReads?: number;
  /**
   * The platform's own `task_cost` (seconds of upstream work), summed over the finished tasks that
   * report one (the novelty agent search does); absent when none did.
   */
  taskCost?: number;
}

export const emptyUsage = (): JobUsage => ({
  calls: 0,
  failedCalls: 0,
  throttledCalls: 0,
  billedUnits: 0,
  tokens: 0,
  callMs: 0,
  duplicateCreates: 0,
});

export interface SelectionOption {
  /** Stable within one offer: what `opflow resume --select` names. */
  id: string;
  label: string;
  detail?: string | undefined;
  /** Marked by the upstream as chosen by default. */
  preselected: boolean;
}

export interface PendingSelection {
  /** The step that offered the options; the answer is kept under this name. */
  step: string;
  /** Where the job goes once the answer is in. */
  nextStep: string;
  prompt: string;
  options: SelectionOption[];
  min: number;
  max: number;
  offeredAt: number;
}

/** One earlier run of a job that ended FAILED or CANCELLED and was retried (`retryJob`). */
export interface JobRun {
  status: 'FAILED' | 'CANCELLED';
  /** The step the run ended at. */
  step: string;
  error?: JobError | undefined;
  finishedAt?: number | undefined;
  /** Usage of the job up to the end of that run (cumulative, as `usage` was then). */
  usage: JobUsage;
  /** When it was retried, and from which step. */
  retriedAt: number;
  retriedFrom: string;
  fromStart: boolean;
}

/**
 * A step's answer that came back (and was paid for) but could not be stored yet: the report store
 * failed (a full or read-only disk, an unwritable report folder, S3 unavailable). The runner stores
 * it and applies its decision before anything else, and never calls the upstream again for it.
 */
export interface UnsavedAnswer {
  /** The step that got the answer. */
  step: string;
  /** What the step decided from it. */
  decision: StepDecision;
  /** The report store key of the step's data, and the data as JSON text when it is still to be written. */
  output?: string | undefined;
  data?: string | undefined;
}

/** Where the job's input lives: inline when small, else in the ReportStore. */
export type JobInput = { inline: unknown } | { ref: string };

/** The caps of the schedule or webhook source that set a job's `maxUnits` (see `Job.costCap`). */
export interface CostCapOrigin {
  owner: 'schedule' | 'webhook source';
  name: string;
  maxUnitsPerRun?: number | undefined;
  maxUnitsPerDay?: number | undefined;
  /** Billed units of its other jobs of the 24 hours before this one started. */
  spentToday?: number | undefined;
  /** When, with nothing more billed, the 24 hours' spend falls below `maxUnitsPerDay` (ms). */
  dayFreesAt?: number | undefined;
}

export interface Job {
  id: string;
  workflow: string;
  workflowVersion: number;
  tenant: string;
  status: JobStatus;
  /** The step to run next (or being waited on). */
  step: string;
  /** Increases by one on every committed write. */
  version: number;
  input: JobInput;
  /** A short human label (e.g. the input file name). */
  label?: string | undefined;
  /**
   * What the input's document said about itself and was kept back from the upstream (a disclosure
   * form's docket id, title, inventors, business unit, dates): shown in the job's outputs only.
   */
  metadata?: Record<string, string | string[]> | undefined;
  /** Which upstream served the job (set by the step that calls it; absent before its first call). */
  upstream?: UpstreamIdentity | undefined;
  /** Small values kept between steps: upstream ids (task_id, report_id, job_id, chat_id), choices. */
  context: Record<string, unknown>;
  selection: SelectionPolicy;
  /** Option ids chosen at each selection point, by the name of the step that offered them. */
  selections: Record<string, string[]>;
  pending?: PendingSelection | undefined;
  /** Who answered each selection point, when and how (the latest 50), first approvals included. */
  answers?: SelectionAnswer[] | undefined;
  /** The people asked to answer the selection awaited now, per the reviewers' config (shared/reviewers). */
  review?: ReviewState | undefined;
  /**
   * The reviews of selection points offered before the current one (their notice rounds, claims
   * ended), the latest 20: a new offer's review takes `review`'s place (`withReview`), and who was
   * told at an earlier point stays on record (`selectionRounds`).
   */
  pastReviews?: ReviewState[] | undefined;
  /** Failed attempts of the current step. */
  attempts: number;
  /** Polls of the current step, and when its polling started. */
  polls: number;
  pollStartedAt?: number | undefined;
  /** When a poll of the current step last found its task still running (learned poll timing). */
  lastPolledAt?: number | undefined;
  /**
   * Tasks this run created again because the platform no longer knew them ("task ... not found" at a
   * step that reads one; see `maxTaskRecreates`). Absent: none.
   */
  recreatedTasks?: number | undefined;
  /** Create calls sent per step (to count duplicates after crashes and repeats by retries). */
  intents: Record<string, number>;
  /**
   * Set when a create call's intent is committed, cleared by the step's outcome. While set,
   * `nextRunAt` is pushed out by the in-flight allowance and pushed again by a heartbeat while the
   * call is alive, so no process runs the job beside its call; once `nextRunAt` has passed (or
   * `inFlightBy` is known dead) the caller is gone and the job runs again (a counted repeat).
   */
  inFlightSince?: number | undefined;
  /**
   * Who makes the call in flight (a process of the local backend: host/pid/nonce), so a restart can
   * tell that the caller is gone without waiting for the allowance to run out. Absent on AWS.
   */
  inFlightBy?: string | undefined;
  nextRunAt: number;
  /**
   * A token of the key's rate budget reserved for this job's next call, due at this time: the job
   * waits for it (one message) instead of coming back again and again for the next free token.
   */
  tokenAt?: number | undefined;
  /**
   * The job waits for a token of its key's saturated budget with no message in the queue (admission,
   * aws): a releaser (the step worker after a commit of the same key, the sweeper when the key's
   * line is idle) reserves its token and sends its one message, in due order. `bucket`: the key's
   * fingerprint; `withinMs`: how far past its due time the job's token may lie (its priority).
   */
  parked?: { bucket: string; withinMs: number } | undefined;
  deadlineAt: number;
  lastError?: JobError | undefined;
  /** The current step's answer, received but not stored yet (see UnsavedAnswer). */
  unsaved?: UnsavedAnswer | undefined;
  usage: JobUsage;
  /**
   * Messages sent to move the job on: one by each commit that schedules its next look and each
   * release of a parked job (see `defaultMessageBudget`; the sweeper's re-send, at the job's version
   * without a write, is not counted). Waits for a token of the
   * key's budget are not counted: the key's rate paces them and the deadline bounds them. Absent: 0.
   */
  messages?: number | undefined;
  /** Report store keys of what this job has produced so far (step data, report, attachments). */
  outputs: string[];
  /** Earlier runs, oldest first, when the job was retried; this is run `runs.length + 1`. */
  runs?: JobRun[] | undefined;
  batchId?: string | undefined;
  /** How urgent the job is against the key's other work (`jobPriorities`); absent: `normal`. */
  priority?: JobPriority | undefined;
  /**
   * The most billed units the job may spend (all its runs): once its usage reaches it, the job stops
   * before its next step, FAILED with kind `cost-cap` (a retry with a higher cap goes on). Absent: no cap.
   */
  maxUnits?: number | undefined;
  /**
   * Where `maxUnits` came from when a schedule or webhook source set it: its caps and, for a day
   * cap, what its jobs of the last 24 hours had been billed when this job started and when that
   * spend falls below the cap (if nothing more is billed). So a job stopped at its cap names the cap.
   */
  costCap?: CostCapOrigin | undefined;
  source: JobSource;
  idempotencyKey?: string | undefined;
  callbackUrl?: string | undefined;
  /** The callback's delivery: its attempts and state (shared/callbacks/sender.ts). */
  callback?: CallbackDelivery | undefined;
  createdAt: number;
  updatedAt: number;
  finishedAt?: number | undefined;
  /** When the record may be deleted (seconds since the epoch, for stores with TTL). */
  expiresAt?: number | undefined;
}

/**
 * advance()'s `unpark`: the job leaves its key's line of parked jobs, due as before. Here because
 * it needs no workflow: the sweeper, which loads none, unparks the parked jobs of a key gone idle.
 */
/**
 * A record written by a clock ahead of this one (its `updatedAt` is in this clock's future), with
 * its times re-based on this clock: the wait it meant (`nextRunAt - updatedAt`) now starts now, and
 * a token reserved on the other clock's time is dropped. The deadline is kept: a job gets at most
 * the skew as extra time, never less than it was given.
 */
export function rebasedOnClock(job: Job, now: number): Job {
  const waitMs = Math.max(0, job.nextRunAt - job.updatedAt);
  return { ...job, version: job.version + 1, updatedAt: now, nextRunAt: now + waitMs, tokenAt: undefined };
}

export function unparkedJob(job: Job, now: number): Job {
  return { ...job, version: job.version + 1, updatedAt: now, parked: undefined, messages: sentOne(job) };
}

/**
 * The runaway guard: a job may send this many messages (see `Job.messages`) before it fails with
 * kind `message-budget`. Lambda's recursive loop detection is off for the step worker (a job's
 * steps are a chain of messages longer than its 16 hops), so a loop (a workflow that steps back for
 * ever) is stopped here, not by AWS. Real runs are far below it: a novelty check sends 14 to 52 messages against the sandbox (52
 * before its poll timing is learned), and one that polls every step to its give-up time 168 (the
 * most of any workflow; docs/concepts/limits.md).
 * `OPFLOW_JOB_MESSAGE_BUDGET` sets another budget for every function and process.
 */
export const defaultMessageBudget = 1_000;
export const messageBudgetVariable = 'OPFLOW_JOB_MESSAGE_BUDGET';

/** The budget from the environment (`OPFLOW_JOB_MESSAGE_BUDGET`); throws naming it when it is not a whole number above 0. */
export function messageBudgetFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env[messageBudgetVariable]?.trim();
  if (raw === undefined || raw === '') return defaultMessageBudget;
  const budget = Number(raw);
  if (!Number.isSafeInteger(budget) || budget < 1) {
    throw new Error(`${messageBudgetVariable} must be a whole number of messages above 0, got "${raw}"`);
  }
  return budget;
}

/** The job's message count with one more message. */
export function sentOne(job: Pick<Job, 'messages'>): number {
  return (job.messages ?? 0) + 1;
}

/** Whether sending the job one more message would take it past `budget`. */
export function overMessageBudget(job: Pick<Job, 'messages'>, budget: number): boolean {
  return sentOne(job) > budget;
}

/**
 * The job failed by the runaway guard, as the commit that would have sent its next message (`job`
 * is that commit's record, its version already counted). Nothing is sent: the job is finished.
 */
export function failedOverMessageBudget(job: Job, budget: number, now: number): Job {
  return {
    ...job,
    status: 'FAILED',
    pending: undefined,
    tokenAt: undefined,
    parked: undefined,
    lastError: {
      step: job.step,
      kind: 'message-budget',
      message: `the job has sent ${job.messages ?? 0} messages, its budget (${messageBudgetVariable}, ${budget}); it is stopped here as a likely loop (a step that keeps coming back, or a step its worker never finishes). opflow retry runs it again with a fresh count`,
      retryable: false,
      at: now,
    },
    finishedAt: now,
    expiresAt: Math.floor(now / 1000) + 30 * 24 * 3600,
  };
}
