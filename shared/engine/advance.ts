/**
 * advance(): the pure heart of the engine. Given a job, what its current step produced and the
 * time, it returns the next job record and when to look at it again. No I/O, no clock, no
 * randomness of its own: the step runner supplies all three, so hours of polling are tested instantly.
 */
import { advanceWait } from './admission/waits';
import { costCapMessage } from './cost-cap-message';
import {
  emptyUsage,
  type FailureKind,
  failedOverMessageBudget,
  isTerminal,
  type Job,
  type JobError,
  type JobUsage,
  overMessageBudget,
  rebasedOnClock,
  type SelectionOption,
  sentOne,
  type UnsavedAnswer,
} from './job-record';
import {
  defaultPollPolicy,
  type PollPolicy,
  pollDelay,
  type RetryPolicy,
  retryDefaultsFor,
  retryDelay,
} from './policies';
import {
  type SelectionOffer,
  type SkippedStep,
  type Step,
  type StepDecision,
  skippedByInput,
  skippedSteps,
  skippedStepsKey,
  stepEffect,
  type Workflow,
} from './workflow';

/** What went wrong in a step, in the engine's terms (an OpenPlatformError maps onto it). */
export interface StepFailure {
  kind: FailureKind;
  message: string;
  retryable: boolean;
  code?: number | undefined;
  httpStatus?: number | undefined;
  correlationId?: string | undefined;
  operationId?: string | undefined;
  retryAfterMs?: number | undefined;
  /** The request provably never reached the upstream (the connection could not be made). */
  unsent?: boolean | undefined;
}

export type StepOutcome =
  | {
      type: 'decision';
      decision: StepDecision;
      usage?: Partial<JobUsage>;
      output?: string | undefined;
      /**
       * The report written for the job this decision completes (result.json, report.md, ...): added
       * to its outputs. The runner renders the report from the record advance() returned without
       * them, then advances again with them, so the record it commits is still advance()'s.
       */
      reportOutputs?: readonly string[] | undefined;
    }
  | { type: 'error'; failure: StepFailure; usage?: Partial<JobUsage> }
  | { type: 'deadline' };

/**
 * What happens to a job around its call, besides the call's outcome. Every change of a job record
 * goes through advance() with one of these or a StepOutcome; the runner only reads, guards, takes a
 * token, calls, and commits what advance() returned.
 */
export type EngineEvent =
  | StepOutcome
  /** The job's billed units reached its `maxUnits`: it stops before the step (see costCapReached). */
  | { type: 'cost-cap' }
  /**
   * The key's rate budget has no token for this job before `retryAt`. The record changes only when
   * the job has waited for long (`refreshAfterMs` past its `nextRunAt`): `nextRunAt` moves to
   * `retryAt`, so no sweeper takes a job that waits its turn for a stranded one.
   */
  | {
      type: 'no-token';
      retryAt: number;
      refreshAfterMs: number;
      /** The token at `retryAt` is reserved for the job: it waits for it, recorded in `tokenAt`. */
      reserved?: boolean | undefined;
    }
  /**
   * The token of the job's next call is reserved at `at` (not before its `nextRunAt`) in the same
   * commit as the change that scheduled that call: `job` is that change, not yet committed (its
   * version is kept), and the call is sent once, for when its token comes (runner.ts).
   */
  | { type: 'token-reserved'; at: number }
  /**
   * Admission (aws): the job's call has no token within its horizon while the key's budget is
   * saturated. The job is parked (`parked`): committed without a message, due as before, until a
   * releaser reserves its token ('admitted') or a stranded one is nudged ('unpark'). With `pending`,
   * `job` is a change not yet committed (the commit that scheduled the call; its version is kept),
   * as with 'token-reserved'.
   */
  | { type: 'park'; bucket: string; withinMs: number; pending?: boolean | undefined }
  /** A releaser reserved the parked job's token at `at`: one commit and the job's one message. */
  | { type: 'admitted'; at: number }
  /** A parked job's message came (the sweeper's nudge): it is no longer parked, and runs as usual. */
  | { type: 'unpark' }
  /** The record was written by a clock ahead of this one: its times are re-based on this clock. */
  | { type: 'clock-ahead' }
  /**
   * The job's step is left out by its `skipWhen` (no call): `reasons` are the steps the job's input
   * and state leave out (`stepsLeftOut`), the current one among them. The job enters the first step
   * after it that is not left out, each skipped one kept under `skippedSteps` with its reason.
   */
  | { type: 'skip'; reasons: Readonly<Record<string, string>> }
  /**
   * A paid call for `output` is about to be sent (the job's claim on its version): `nextRunAt` is
   * pushed out by `allowanceMs`, so no process runs the job beside the call while it is alive, and
   * `by` names the caller, so a restart can tell that it died. A create or update's intent is
   * recorded too (a repeat is counted); a billed read (`read`: a poll, a count) records none.
   */
  | {
      type: 'call-started';
      output: string;
      allowanceMs: number;
      by?: string | undefined;
      read?: boolean | undefined;
    }
  /**
   * The budget filler moves a job that waits for its next poll to `at`: pulled forward while the key's
   * rate budget has room, or re-aimed at the learned estimate when it changed (admission/budget-filler.ts). Only
   * a job waiting on a poll (no call in flight, no token reserved, not backing off) is moved.
   */
  | { type: 'reschedule'; at: number }
  /** The call started by `call-started` is still alive: push `nextRunAt` out again (a heartbeat). */
  | { type: 'call-alive'; allowanceMs: number }
  /**
   * The upstream answered that it did not do the create call (throttled, busy, refused): nothing
   * was created, so the intent is undone (a later retry is no repeat), then handled as the error.
   */
  | {
      type: 'call-refused';
      output: string;
      failure: StepFailure;
      usage?: Partial<JobUsage>;
      /** The job as it was before `call-started` (its intents and repeat count are restored). */
      before: Job;
    }
  /**
   * A call's cost whose outcome could not be committed (another process changed the job meanwhile):
   * the usage is added, so every paid call is counted. `answer`: a paid call's answer; when the job
   * was finished under the call (cancelled, or failed at its deadline) still at the call's step and
   * in the same run, the answer is kept (`unsaved`), so a retry goes on from it instead of paying
   * for the call again.
   */
  | { type: 'late-usage'; usage: Partial<JobUsage>; answer?: LateAnswer }
  /**
   * The step's call was answered (and paid for) but its answer could not be stored (a disk or
   * report store error), or the workflow finished but its report could not be written. The answer
   * is kept in the job (`unsaved`) and the store is tried again on the step's backoff, without
   * calling the upstream again; attempts used up, the job fails with the retryable `failure` and
   * `opflow resume` / `opflow retry` store the kept answer once the store works.
   */
  | { type: 'unsaved'; unsaved: UnsavedAnswer; failure: StepFailure; usage?: Partial<JobUsage> };

/** A paid call's answer that came back after its job was changed by another writer (`late-usage`). */
export interface LateAnswer {
  kept: UnsavedAnswer;
  /** The job's run the call was made in (`runs.length` then). */
  run: number;
}

/** Whether a late answer is kept with the job: finished under the call, at its step, same run, none kept yet. */
function keepsLateAnswer(job: Job, answer: LateAnswer | undefined): answer is LateAnswer {
  return (
    answer !== undefined &&
    (job.status === 'FAILED' || job.status === 'CANCELLED') &&
    job.step === answer.kept.step &&
    job.unsaved === undefined &&
    (job.runs?.length ?? 0) === answer.run
  );
}

/** The job with a late call's usage added, and its answer kept when `keepsLateAnswer`. */
function withLateUsage(job: Job, event: Extract<EngineEvent, { type: 'late-usage' }>, now: number): Job {
  return {
    ...job,
    version: job.version + 1,
    updatedAt: now,
    usage: addUsage(job.usage, event.usage),
    ...(keepsLateAnswer(job, event.answer) ? { unsaved: event.answer.kept } : {}),
  };
}

/**
 * The claim of a billed call: the job marked in flight (and RUNNING from its first call: a one-step
 * job streams its whole answer under it), its nextRunAt pushed out by the allowance, and a create's
 * intent recorded. A repeat is counted: a create whose output was sent before (`duplicateCreates`),
 * or a read claimed while an earlier claim's mark is still set (its caller died, or was taken over,
 * between the send and the outcome's commit, which clears the mark: `duplicateReads`).
 */
function claimedCall(job: Job, event: Extract<EngineEvent, { type: 'call-started' }>, now: number): Job {
  const sent = job.intents[event.output] ?? 0;
  const intents = event.read ? job.intents : { ...job.intents, [event.output]: sent + 1 };
  const repeat = !event.read && sent > 0;
  const readAgain = event.read && job.inFlightSince !== undefined;
  return {
    ...job,
    status: job.status === 'QUEUED' ? 'RUNNING' : job.status,
    version: job.version + 1,
    updatedAt: now,
    intents,
    usage: repeat
      ? { ...job.usage, duplicateCreates: job.usage.duplicateCreates + 1 }
      : readAgain
        ? { ...job.usage, duplicateReads: (job.usage.duplicateReads ?? 0) + 1 }
        : job.usage,
    inFlightSince: now,
    inFlightBy: event.by,
    tokenAt: undefined,
    parked: undefined,
    nextRunAt: now + event.allowanceMs,
  };
}

export interface Advanced {
  /** The next record; when it is the very object given (`unchanged`), there is nothing to commit. */
  job: Job;
  /** Nothing changed: do not commit (the job only waits). */
  unchanged?: boolean | undefined;
  /** Run the job again after this many milliseconds; absent when it waits for a person or is finished. */
  delayMs?: number | undefined;
  /** The workflow finished with this step: render the report before committing. */
  completed: boolean;
}

/** Time a quota-exhausted tenant's jobs wait before trying again (the platform publishes no reset time). */
export const quotaPauseMs = 30 * 60_000;
/** How long finished jobs are kept before the store may drop them (30 days). */
export const finishedRetentionMs = 30 * 24 * 60 * 60_000;

/**
 * A step's retry policy: the catalogue's default for its operation's effect, then what the step
 * declares. `operationId` names the operation of a `call` job's step (known only at run time).
 */
export function retryPolicyOf(step: Step, operationId?: string): RetryPolicy {
  return { ...retryDefaultsFor(stepEffect(step, operationId)), ...step.retry };
}

export function pollPolicyOf(step: Step): PollPolicy {
  return { ...defaultPollPolicy, ...step.poll };
}

export function findStep(workflow: Workflow, name: string): Step | undefined {
  return workflow.steps.find((step) => step.name === name);
}

/** Whether a step only reads an upstream task (a poll, a result): no create, no change, no download. */
function readsTask(step: Step): boolean {
  return step.kind !== 'fetch' && step.kind !== 'request' && stepEffect(step) === 'read';
}

/**
 * The step that created the upstream task `stepName` reads: the nearest earlier step that creates
 * something. Undefined when `stepName` is not a step that only reads a task, or none created one.
 */
export function taskCreatorOf(workflow: Workflow, stepName: string): string | undefined {
  const step = findStep(workflow, stepName);
  if (!step || !readsTask(step)) return undefined;
  const index = workflow.steps.indexOf(step);
  for (let i = index - 1; i >= 0; i--) {
    const candidate = workflow.steps[i]!;
    if (candidate.kind !== 'fetch' && !readsTask(candidate)) return candidate.name;
  }
  return undefined;
}

/**
 * How many times a run creates again the tasks the platform no longer knows ("task ... not found"
 * at a step that reads one) before the job fails: each is a paid repeat, counted.
 */
export const maxTaskRecreates = 2;

function stepAfter(workflow: Workflow, name: string): string | undefined {
  const index = workflow.steps.findIndex((step) => step.name === name);
  return workflow.steps[index + 1]?.name;
}

/** Seconds to a tenth of a millisecond, so sums of floats stay readable. */
const roundCost = (seconds: number) => Math.round(seconds * 10_000) / 10_000;

export function addUsage(total: JobUsage, delta: Partial<JobUsage> | undefined): JobUsage {
  if (!delta) return total;
  const sum = { ...emptyUsage(), ...total };
  const counters = Object.keys(emptyUsage()) as Exclude<keyof JobUsage, 'taskCost' | 'duplicateReads'>[];
  for (const key of counters) sum[key] += delta[key] ?? 0;
  // Optional figures (taskCost) appear once a call reports one.
  if (delta.taskCost !== undefined) sum.taskCost = roundCost((total.taskCost ?? 0) + delta.taskCost);
  return sum;
}

/** The options `auto` takes: the ones the upstream marked, or all of them when none is marked. */
export function autoSelection(offer: SelectionOffer): string[] {
  const marked = offer.options.filter((option) => option.preselected);
  const chosen = (marked.length > 0 ? marked : offer.options).map((option) => option.id);
  return chosen.slice(0, offer.max ?? chosen.length);
}

/** Why a manual answer is refused, or undefined when it is a valid choice. */
export function selectionProblem(
  options: SelectionOption[],
  min: number,
  max: number,
  chosen: readonly string[],
): string | undefined {
  const offered = new Set(options.map((option) => option.id));
  const unknown = chosen.filter((id) => !offered.has(id));
  if (unknown.length > 0) {
    return `not among the options offered: ${unknown.join(', ')} (offered: ${[...offered].join(', ')})`;
  }
  if (new Set(chosen).size !== chosen.length) return 'an option is chosen twice';
  if (chosen.length < min)
    return `choose at least ${min} option${min === 1 ? '' : 's'}, got ${chosen.length}`;
  if (chosen.length > max) return `choose at most ${max} option${max === 1 ? '' : 's'}, got ${chosen.length}`;
  return undefined;
}

function failed(job: Job, now: number, error: JobError): Advanced {
  return {
    job: {
      ...job,
      status: 'FAILED',
      lastError: error,
      pending: undefined,
      finishedAt: now,
      expiresAt: expiry(now),
    },
    completed: false,
  };
}

const expiry = (now: number) => Math.floor((now + finishedRetentionMs) / 1000);

/** Enter `stepName` fresh: no attempts or polls yet; a polled step is first looked at after its first delay. */
function enter(
  workflow: Workflow,
  job: Job,
  stepName: string,
  now: number,
  timer?: PollTimer | undefined,
): Advanced {
  const step = findStep(workflow, stepName);
  const declared = step?.poll ? pollPolicyOf(step).firstDelayMs : 0;
  const firstWait =
    step?.poll && timer
      ? timer(step, { elapsedMs: 0, lastPollAtMs: 0, declaredDelayMs: declared })
      : declared;
  return {
    job: {
      ...job,
      step: stepName,
      status: firstWait > 0 ? 'WAITING' : 'RUNNING',
      attempts: 0,
      polls: 0,
      pollStartedAt: firstWait > 0 ? now : undefined,
      lastPolledAt: undefined,
      lastError: undefined,
      nextRunAt: now + firstWait,
    },
    delayMs: firstWait,
    completed: false,
  };
}

/**
 * When to look at a polled step next, in milliseconds from now: the learned timing of its
 * operation (see poll-timing.ts), or `declaredDelayMs` (the workflow's schedule) when nothing is
 * known. `elapsedMs` is the time since its task started, `lastPollAtMs` when (since its start) a poll
 * last found it running, 0 for none.
 */
export type PollTimer = (
  step: Step,
  timing: { elapsedMs: number; lastPollAtMs: number; declaredDelayMs: number },
) => number;

export function advance(
  workflow: Workflow,
  job: Job,
  event: EngineEvent,
  now: number,
  random: () => number,
  timer?: PollTimer,
): Advanced {
  switch (event.type) {
    case 'no-token':
    case 'token-reserved':
    case 'park':
    case 'admitted':
    case 'unpark':
      return advanceWait(job, event, now);
    case 'cost-cap': {
      const message = costCapMessage(job);
      const stopped = { ...job, version: job.version + 1, updatedAt: now };
      return failed(stopped, now, errorAt(job, now, { kind: 'cost-cap', message, retryable: false }));
    }
    case 'skip':
      return skipLeftOut(workflow, job, event.reasons, now, timer);
    case 'clock-ahead': {
      const rebased = rebasedOnClock(job, now);
      return { job: rebased, delayMs: rebased.nextRunAt - now, completed: false };
    }
    case 'call-started':
      return { job: claimedCall(job, event, now), completed: false };
    case 'reschedule': {
      const at = Math.max(now, Math.min(event.at, job.deadlineAt));
      if (!waitsForPoll(workflow, job) || at === job.nextRunAt) {
        return { job, unchanged: true, delayMs: Math.max(0, job.nextRunAt - now), completed: false };
      }
      return {
        job: { ...job, version: job.version + 1, updatedAt: now, nextRunAt: at },
        delayMs: at - now,
        completed: false,
      };
    }
    case 'call-alive':
      return {
        job: { ...job, version: job.version + 1, updatedAt: now, nextRunAt: now + event.allowanceMs },
        completed: false,
      };
    case 'late-usage':
      return { job: withLateUsage(job, event, now), unchanged: false, completed: false };
    case 'call-refused': {
      const undone: Job = {
        ...job,
        intents: { ...job.intents, [event.output]: event.before.intents[event.output] ?? 0 },
        usage: { ...job.usage, duplicateCreates: event.before.usage.duplicateCreates },
      };
      if ((undone.intents[event.output] ?? 0) === 0) delete undone.intents[event.output];
      return advanceOutcome(
        workflow,
        undone,
        { type: 'error', failure: event.failure, usage: event.usage },
        now,
        random,
        timer,
      );
    }
    case 'unsaved':
      return advanceOutcome(
        workflow,
        { ...job, unsaved: event.unsaved },
        { type: 'error', failure: event.failure, usage: event.usage },
        now,
        random,
        timer,
      );
    default:
      return advanceOutcome(workflow, job, event, now, random, timer);
  }
}

/**
 * Whether the job's billed units reached its `maxUnits`, so it may not start its step. Checked as a
 * step begins (not between the polls of a task already paid for): billed units are known only after
 * a call, so the call that crosses the cap is the job's last.
 */
export function costCapReached(job: Job): boolean {
  return job.maxUnits !== undefined && job.polls === 0 && job.usage.billedUnits >= job.maxUnits;
}

/**
 * The runaway guard on a change that is to be committed: when it schedules the job's next look
 * (`delayMs`) the job's message count goes up by one; past `budget` the change becomes the job
 * failed (`message-budget`), with nothing to send. A finished job, a change that only waits
 * (`unchanged`) or one that sends nothing is left as it is.
 */
export function countMessage(advanced: Advanced, budget: number, now: number): Advanced {
  const { job } = advanced;
  if (advanced.delayMs === undefined || advanced.unchanged || isTerminal(job.status)) return advanced;
  if (overMessageBudget(job, budget)) {
    return { job: failedOverMessageBudget(job, budget, now), completed: false };
  }
  return { ...advanced, job: { ...job, messages: sentOne(job) } };
}

/** What `waitsForPoll` reads of a job (a whole job, or the budget filler's slim view of one). */
export type PollWaitFields = Pick<
  Job,
  'status' | 'step' | 'pollStartedAt' | 'lastPolledAt' | 'inFlightSince' | 'tokenAt' | 'attempts'
> & { lastError?: { at: number } | undefined; unsaved?: unknown };

/**
 * Whether the job only waits for the next poll of its task: a polled step, WAITING after a poll
 * decision or on entering it, no paid call in flight, no reserved token, no error being backed off
 * or paused on (a quota pause, a retry) and no kept answer to store.
 */
export function waitsForPoll(workflow: Workflow, job: PollWaitFields): boolean {
  if (job.status !== 'WAITING' || job.pollStartedAt === undefined) return false;
  if (job.inFlightSince !== undefined || job.tokenAt !== undefined || job.unsaved !== undefined) return false;
  if (job.attempts > 0) return false;
  const lookedAt = job.lastPolledAt ?? job.pollStartedAt;
  if (job.lastError !== undefined && job.lastError.at >= lookedAt) return false;
  return findStep(workflow, job.step)?.poll !== undefined;
}

function advanceOutcome(
  workflow: Workflow,
  job: Job,
  outcome: StepOutcome,
  now: number,
  random: () => number,
  timer: PollTimer | undefined,
): Advanced {
  const advanced = advanceUncapped(workflow, job, outcome, now, random, timer);
  const { job: next, delayMs } = advanced;
  // Never look again later than the deadline (a long poll delay, a backoff or a quota pause):
  // the job is looked at when its time is up, and failed then.
  if (delayMs !== undefined && next.nextRunAt > next.deadlineAt) {
    const capped = Math.max(0, next.deadlineAt - now);
    return { ...advanced, job: { ...next, nextRunAt: now + capped }, delayMs: capped };
  }
  return advanced;
}

/**
 * A step's outcome in two stages: the call is settled (`settleCall`: the next version, nothing in
 * flight, its usage and output kept), then what the outcome asks for is decided: an error is retried,
 * paused on, skipped or failed (`afterError`); a decision moves the job on (`afterDecision`).
 */
function advanceUncapped(
  workflow: Workflow,
  job: Job,
  outcome: StepOutcome,
  now: number,
  random: () => number,
  timer: PollTimer | undefined,
): Advanced {
  const base = settleCall(job, outcome, now);
  if (outcome.type === 'deadline') {
    // A paid call still under way (its caller keeps `nextRunAt` ahead of now) keeps its mark on the
    // failed job, as on a cancelled one: a retry is refused until its answer is in (late-usage.ts
    // clears the mark and keeps the answer) or its allowance ends, so the new run never calls beside it.
    const callAlive = job.inFlightSince !== undefined && job.nextRunAt > now;
    return failed(
      callAlive ? { ...base, inFlightSince: job.inFlightSince, inFlightBy: job.inFlightBy } : base,
      now,
      errorAt(job, now, { kind: 'deadline', message: 'the job passed its deadline', retryable: false }),
    );
  }

  const step = findStep(workflow, job.step);
  if (!step) {
    return failed(
      base,
      now,
      errorAt(job, now, {
        kind: 'definition',
        message:
          workflow.steps.length === 0
            ? `unknown workflow "${workflow.name}"`
            : `workflow ${workflow.name} has no step "${job.step}"`,
        retryable: false,
      }),
    );
  }
  const settled: Settled = { workflow, job, base, step, now, timer };
  return outcome.type === 'error'
    ? afterError(settled, outcome.failure, random)
    : afterDecision(settled, outcome.decision, outcome.reportOutputs);
}

/** What the stages after a settled call read: the job as it was, the settled record, its step. */
interface Settled {
  workflow: Workflow;
  /** The job before the outcome (its attempts, polls and status as the call found them). */
  job: Job;
  /** The job with the call settled: the record every stage builds its next one from. */
  base: Job;
  step: Step;
  now: number;
  timer: PollTimer | undefined;
}

/** The record once the call is over, whatever it asks for next: counted, kept, nothing in flight. */
function settleCall(job: Job, outcome: StepOutcome, now: number): Job {
  return {
    ...job,
    version: job.version + 1,
    updatedAt: now,
    inFlightSince: undefined,
    inFlightBy: undefined,
    tokenAt: undefined,
    parked: undefined,
    // A kept answer stays until a decision of its step is committed (it is the step's answer).
    unsaved: outcome.type === 'decision' ? undefined : job.unsaved,
    usage: addUsage(job.usage, outcome.type === 'deadline' ? undefined : outcome.usage),
    outputs:
      outcome.type === 'decision' && outcome.output && !job.outputs.includes(outcome.output)
        ? [...job.outputs, outcome.output]
        : job.outputs,
  };
}

/** A job error raised by the job's current step now. */
function errorAt(job: Job, now: number, failure: Omit<JobError, 'step' | 'at'>): JobError {
  return { ...failure, step: job.step, at: now };
}

/** The operation a step calls, for its errors (a fetch step calls none of the catalogue's). */
const operationOf = (step: Step) => (step.kind === 'fetch' ? undefined : step.operation);

/**
 * A failed call: an expired link is fetched again, a throttled or retryable one retried after its
 * backoff, a tenant out of quota paused, an optional step skipped; anything else fails the job.
 */
function afterError(settled: Settled, failure: StepFailure, random: () => number): Advanced {
  const { workflow, job, base, step, now, timer } = settled;
  const lastError = errorAt(job, now, {
    kind: failure.kind,
    message: failure.message,
    retryable: failure.retryable,
    code: failure.code,
    httpStatus: failure.httpStatus,
    correlationId: failure.correlationId,
    operationId: failure.operationId,
  });
  if (failure.kind === 'not-found' && step.kind === 'fetch' && step.refreshFrom) {
    // The link expired: ask the upstream for a fresh one rather than failing.
    const refreshed = enter(workflow, { ...base, lastError }, step.refreshFrom, now);
    return { ...refreshed, job: { ...refreshed.job, lastError } };
  }
  const creator = failure.kind === 'not-found' ? taskCreatorOf(workflow, step.name) : undefined;
  if (creator && (job.recreatedTasks ?? 0) < maxTaskRecreates) {
    // The platform no longer knows the task (it expired, or a sandbox restarted): create it again.
    // The create's intent is kept, so the new one is a counted paid repeat (usage.duplicateCreates).
    const recreated = { ...base, recreatedTasks: (job.recreatedTasks ?? 0) + 1 };
    const again = enter(workflow, recreated, creator, now, timer);
    return { ...again, job: { ...again.job, lastError } };
  }
  const policy = retryPolicyOf(step, failure.operationId);
  // Throttling is the upstream asking us to slow down, not the step failing: the rate limiter
  // paces the retry, the deadline bounds it, and it uses up none of the step's attempts.
  const throttledOnly = failure.kind === 'throttled';
  const attempts = throttledOnly ? job.attempts : job.attempts + 1;
  const retried = failure.retryable && (throttledOnly || attempts < policy.maxAttempts);
  // An optional step is not worth a quota pause: the job goes on without its data.
  if (step.optional && (failure.kind === 'quota-exhausted' || !retried)) {
    return skipOptional(workflow, base, step, lastError, now, timer);
  }
  if (failure.kind === 'quota-exhausted') {
    return {
      job: { ...base, status: 'WAITING', lastError, nextRunAt: now + quotaPauseMs },
      delayMs: quotaPauseMs,
      completed: false,
    };
  }
  if (retried) {
    const delayMs = retryDelay(policy, Math.max(1, attempts), random, failure.retryAfterMs);
    return {
      job: {
        ...base,
        attempts,
        lastError,
        status: job.status === 'WAITING' ? 'WAITING' : 'RUNNING',
        nextRunAt: now + delayMs,
      },
      delayMs,
      completed: false,
    };
  }
  const exhausted = failure.retryable ? ` (gave up after ${attempts} attempts)` : '';
  return failed({ ...base, attempts }, now, { ...lastError, message: lastError.message + exhausted });
}

/**
 * The step decided: its context is merged into the job, then the job enters the next step, polls
 * again, offers a selection, completes, or fails (an optional step is skipped instead).
 */
function afterDecision(
  settled: Settled,
  decision: StepDecision,
  reportOutputs: readonly string[] | undefined,
): Advanced {
  const { workflow, job, base, step, now, timer } = settled;
  const context =
    'context' in decision && decision.context ? { ...base.context, ...decision.context } : base.context;
  const next: Job = { ...base, context };
  switch (decision.type) {
    case 'next': {
      const target = decision.step ?? stepAfter(workflow, job.step);
      if (!target) return complete(next, now, reportOutputs);
      return enter(workflow, next, target, now, timer);
    }
    case 'poll':
      return pollAgain(settled, next);
    case 'select':
      return offerSelection(settled, next, decision);
    case 'complete':
      return complete(next, now, reportOutputs);
    case 'fail': {
      const operationId = operationOf(step);
      const { message, code } = decision;
      if (step.optional) {
        const error = errorAt(job, now, { kind: 'upstream-failed', message, retryable: false, operationId });
        return skipOptional(workflow, next, step, error, now, timer);
      }
      return failed(
        next,
        now,
        errorAt(job, now, { kind: 'upstream-failed', message, code, retryable: false, operationId }),
      );
    }
  }
}

/** The task still runs: look again after the poll delay (learned, or the step's schedule), or give up. */
function pollAgain(settled: Settled, next: Job): Advanced {
  const { job, step, now, timer } = settled;
  const policy = pollPolicyOf(step);
  const startedAt = job.pollStartedAt ?? now;
  if (now - startedAt >= policy.giveUpAfterMs) {
    return failed(
      next,
      now,
      errorAt(job, now, {
        kind: 'poll-timeout',
        message: `the upstream task was still running after ${Math.round((now - startedAt) / 60_000)} minutes`,
        retryable: true,
        operationId: operationOf(step),
      }),
    );
  }
  const polls = job.polls + 1;
  const declaredDelayMs = pollDelay(policy, polls + (step.poll ? 1 : 0));
  const delayMs =
    step.poll && timer
      ? timer(step, { elapsedMs: now - startedAt, lastPollAtMs: now - startedAt, declaredDelayMs })
      : declaredDelayMs;
  return {
    job: {
      ...next,
      status: 'WAITING',
      polls,
      pollStartedAt: startedAt,
      lastPolledAt: now,
      attempts: 0,
      nextRunAt: now + delayMs,
    },
    delayMs,
    completed: false,
  };
}

/** The upstream offers options: `auto` takes its pick and goes on; `manual` waits for a person. */
function offerSelection(
  settled: Settled,
  next: Job,
  decision: Extract<StepDecision, { type: 'select' }>,
): Advanced {
  const { workflow, job, now, timer } = settled;
  const target = decision.step ?? stepAfter(workflow, job.step);
  if (!target) {
    return failed(
      next,
      now,
      errorAt(job, now, {
        kind: 'definition',
        message: 'a selection needs a following step',
        retryable: false,
      }),
    );
  }
  const { offer } = decision;
  if (offer.options.length === 0) {
    return failed(
      next,
      now,
      errorAt(job, now, {
        kind: 'upstream-failed',
        message: `${offer.prompt}: the upstream offered no options`,
        retryable: false,
      }),
    );
  }
  if (job.selection.mode === 'auto') {
    const chosen = autoSelection(offer);
    return enter(
      workflow,
      { ...next, selections: { ...next.selections, [job.step]: chosen } },
      target,
      now,
      timer,
    );
  }
  return {
    job: {
      ...next,
      status: 'AWAITING_INPUT',
      pending: {
        step: job.step,
        nextStep: target,
        prompt: offer.prompt,
        options: offer.options,
        min: offer.min ?? 1,
        max: offer.max ?? offer.options.length,
        offeredAt: now,
      },
      attempts: 0,
      polls: 0,
      pollStartedAt: undefined,
      // Brought back by the sweeper only at the deadline, to fail it if nobody answered.
      nextRunAt: job.deadlineAt,
    },
    completed: false,
  };
}

/**
 * An optional step failed for good: the job goes on with the next step, and keeps why under
 * `skippedSteps` in its context (the report says what is missing and why).
 */
function skipOptional(
  workflow: Workflow,
  job: Job,
  step: Step,
  error: JobError,
  now: number,
  timer: PollTimer | undefined,
): Advanced {
  const target = stepAfter(workflow, step.name);
  const why = {
    kind: error.kind,
    message: error.message,
    ...(error.httpStatus !== undefined ? { httpStatus: error.httpStatus } : {}),
    ...(error.operationId !== undefined ? { operationId: error.operationId } : {}),
    at: now,
    version: job.version,
  };
  const context = {
    ...job.context,
    [skippedStepsKey]: { ...skippedSteps(job.context), [step.name]: why },
  };
  // defineWorkflow refuses an optional last step, so there is always a next one.
  if (!target) return failed({ ...job, context }, now, error);
  return enter(workflow, { ...job, context }, target, now, timer);
}

/**
 * The job's step and those after it that its input and state leave out are skipped without a call:
 * each is kept under `skippedSteps` (kind `skipped`, its reason), and the job enters the first step
 * after them. One commit, however many are skipped.
 */
function skipLeftOut(
  workflow: Workflow,
  job: Job,
  reasons: Readonly<Record<string, string>>,
  now: number,
  timer: PollTimer | undefined,
): Advanced {
  if (reasons[job.step] === undefined) {
    return { job, unchanged: true, delayMs: Math.max(0, job.nextRunAt - now), completed: false };
  }
  const skipped: Record<string, SkippedStep> = { ...skippedSteps(job.context) };
  let target: string | undefined = job.step;
  let reason = reasons[target];
  while (target !== undefined && reason !== undefined) {
    skipped[target] = { kind: skippedByInput, message: reason, at: now, version: job.version + 1 };
    target = stepAfter(workflow, target);
    reason = target === undefined ? undefined : reasons[target];
  }
  const next: Job = {
    ...job,
    version: job.version + 1,
    updatedAt: now,
    context: { ...job.context, [skippedStepsKey]: skipped },
  };
  // defineWorkflow refuses a skippable last step, so there is always a next one.
  if (target === undefined) {
    const message = `step "${job.step}" is left out, but no step follows it`;
    return failed(next, now, errorAt(job, now, { kind: 'definition', message, retryable: false }));
  }
  return enter(workflow, next, target, now, timer);
}

function complete(job: Job, now: number, reportOutputs: readonly string[] = []): Advanced {
  return {
    job: {
      ...job,
      outputs: [...job.outputs.filter((key) => !reportOutputs.includes(key)), ...reportOutputs],
      status: 'SUCCEEDED',
      pending: undefined,
      lastError: undefined,
      finishedAt: now,
      expiresAt: expiry(now),
    },
    completed: true,
  };
}

/** Apply a person's answer to a job that awaits input. Throws a SelectionRefused with the reason. */
export function applySelection(workflow: Workflow, job: Job, chosen: readonly string[], now: number): Job {
  const pending = job.pending;
  if (job.status !== 'AWAITING_INPUT' || !pending) {
    throw new SelectionRefused(`job ${job.id} is ${job.status}, not awaiting a selection`);
  }
  const problem = selectionProblem(pending.options, pending.min, pending.max, chosen);
  if (problem) throw new SelectionRefused(`${pending.prompt}: ${problem}`);
  const entered = enter(
    workflow,
    { ...job, selections: { ...job.selections, [pending.step]: [...chosen] }, pending: undefined },
    pending.nextStep,
    now,
  ).job;
  return { ...entered, version: job.version + 1, updatedAt: now };
}

export class SelectionRefused extends Error {
  override readonly name = 'SelectionRefused';
}
