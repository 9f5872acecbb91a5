/**
 * The step runner: one step of one job, safe under at-least-once delivery. `runStep` reads as its
 * stages:
 * 1. Read (`readAndGuard`): drop the message if the job is gone, finished, or at another version.
 * 2. Guard: not due yet, or a paid call of the job alive somewhere (its nextRunAt is kept ahead by
 *    a heartbeat): send the message back for later. Past its deadline: fail it.
 * 3. Token (`acquireToken`, admission/): take a token of the key's rate budget, or wait for one.
 * 4. Call (`callStep`): one upstream call for the current step, claimed first with
 *    advance('call-started') when it is billed (a create's intent is recorded there, so a crash that
 *    repeats one is counted; a billed read is claimed so two deliveries never both pay); its answer is
 *    stored under keys derived from the job and step, so a retry overwrites rather than duplicates.
 * 5. Learn and commit (`learnAndCommit`): the next state by advance(), committed on the version
 *    read (if another worker won, drop, adding the call's cost to the job all the same); the next
 *    look is scheduled with a delayed message (longer waits rely on nextRunAt and the sweeper).
 *
 * No job record is changed here except through advance().
 */

import { errorMessage } from '../errors/error-message';
import { isOpenPlatformError } from '../openplatform/errors';
import type { CallUsage } from '../openplatform/types';
import { acquireToken, earlyToleranceMs, untilDeadline } from './admission/acquire-token';
import { defaultPollAllowance, pollPrice } from './admission/poll-price';
import { keyFingerprint } from './admission/rate-bucket';
import { reserveNextToken } from './admission/reserve-next';
import {
  type Advanced,
  advance,
  costCapReached,
  countMessage,
  type EngineEvent,
  findStep,
  type LateAnswer,
  type PollTimer,
  pollPolicyOf,
  type StepFailure,
  type StepOutcome,
} from './advance';
import { writerAheadMs } from './clock-skew';
import type { EngineDeps } from './deps';
import { defaultMessageBudget, isTerminal, type Job, type JobUsage, type UnsavedAnswer } from './job-record';
import { createAnswerPublisher } from './partial-answer';
import { learnedPollDelay } from './poll-plan';
import { pollStatsKey, stepStatsKey } from './poll-stats';
import { type DurationSketch, sketchMean } from './poll-timing';
import type { WorkMessage } from './ports';
import { attachmentKey, stepOutputKey } from './report';
import { sameUpstream } from './upstream-identity';
import {
  type Step,
  type StepContext,
  type StepDecision,
  stepContext as stepContextOf,
  stepEffect,
  stepsLeftOut,
  type Workflow,
} from './workflow';

export type StepReport =
  | { outcome: 'dropped'; reason: 'missing' | 'terminal' | 'stale' | 'awaiting-input' }
  /** `delayMs`: when the message comes back; `waitMs` (rate-limited): when the key's next token is due. */
  | {
      outcome: 'deferred';
      reason: 'not-due' | 'rate-limited';
      delayMs: number;
      waitMs?: number;
      /** The job holds a reserved token at `delayMs`: other jobs may still take later ones. */
      reserved?: boolean;
      /** The job is parked (no message): a releaser sends it when its token comes (`deps.admission`). */
      parked?: boolean;
    }
  | { outcome: 'conflict' }
  | { outcome: 'committed'; job: Job };

/** Error kinds that mean the upstream refused the call outright, so a create did not happen. */
const refusedKinds: ReadonlySet<string> = new Set([
  'throttled',
  'busy',
  'quota-exhausted',
  'auth',
  'forbidden',
  'invalid-request',
  'not-found',
]);

/**
 * Whether a failed create was provably not done upstream (so sending it again is no repeat and is
 * not counted): the upstream refused it (throttled, busy, an error of the request or the key), the
 * service was unavailable (HTTP 503: nothing behind the gateway took it), or the request never left
 * this machine (the connection could not be made). A 500, 502 or 504, a timeout or a connection
 * lost after sending may come after the work, so those stay counted when the create is sent again.
 * A call that billed units did its work, whatever its answer said.
 */
function notDone(failure: StepFailure, usage: Partial<JobUsage> | undefined): boolean {
  if ((usage?.billedUnits ?? 0) > 0) return false;
  if (failure.unsent === true) return true;
  if (failure.kind === 'server' && failure.httpStatus === 503) return true;
  return refusedKinds.has(failure.kind);
}

/**
 * Whether the step's call is billed: every Open Platform operation may be, reads included (a poll of
 * a task, a count: the platform answers them with `x-openapi-amount`, the sandbox bills 1 unit each),
 * so each is claimed before it is sent. A download (`fetch`) of a link the platform gave is not.
 */
function billsUnits(step: Step): boolean {
  return step.kind !== 'fetch';
}

/**
 * How long a paid call may be under way without a sign of life before its job counts as stranded
 * (the caller died). While the call is alive the runner pushes `nextRunAt` out again every
 * `inFlightHeartbeatMs` (one write), so a call of any length (a long stream) is covered, and a
 * caller that died is noticed within the allowance.
 */
export const inFlightAllowanceMs = 60_000;

export const inFlightHeartbeatMs = 15_000;

/** The key's bucket name lives with the rate bucket; re-exported for the runner's users. */
export { keyFingerprint } from './admission/rate-bucket';

export async function runStep(deps: EngineDeps, message: WorkMessage): Promise<StepReport> {
  const ready = await readAndGuard(deps, message);
  if ('report' in ready) return ready.report;
  const { workflow, job, step, apiKey, now } = ready;
  const bucket = keyFingerprint(apiKey);
  const token = await acquireToken(deps, { workflow, job, step, message, bucket, now });
  if (token.type !== 'granted') return token.report;
  const call = await callStep(deps, { ...ready, bucket });
  if ('report' in call) return call.report;
  return learnAndCommit(deps, { ...ready, bucket }, call);
}

/** A job whose step may run now: read, due, its step found, its key known. */
interface ReadyStep {
  workflow: Workflow;
  job: Job;
  step: Step;
  apiKey: string;
  now: number;
}

/** Read and guard: the job ready for its step, or what became of the message instead. */
async function readAndGuard(
  deps: EngineDeps,
  message: WorkMessage,
): Promise<ReadyStep | { report: StepReport }> {
  const job = await deps.store.get(message.jobId);
  if (!job) return { report: { outcome: 'dropped', reason: 'missing' } };
  deps.onJobRead?.(job);
  if (isTerminal(job.status)) return { report: { outcome: 'dropped', reason: 'terminal' } };
  if (job.version !== message.version) return { report: { outcome: 'dropped', reason: 'stale' } };
  const now = deps.clock.now();
  const workflow = deps.workflows.get(job.workflow);
  const fail = async (on: Workflow, failure: StepFailure) => ({
    report: await commitAndSchedule(
      deps,
      job,
      advance(on, job, { type: 'error', failure }, now, deps.random),
    ),
  });

  if (!workflow) {
    const failure: StepFailure = {
      kind: 'definition',
      message: `unknown workflow "${job.workflow}"`,
      retryable: false,
    };
    return fail(unknownWorkflow(job.workflow), failure);
  }
  if (writerAheadMs(job, now) > 0) {
    // Written by a clock ahead of this one: its due time would strand it for as long as the skew. A
    // call in flight keeps its mark, its allowance left counted on this clock (a frozen caller is taken
    // over after it); a live caller's commit then loses: its usage added late, a create's answer kept.
    const rebased = advance(workflow, job, { type: 'clock-ahead' }, now, deps.random);
    if (!(await deps.store.commit(rebased.job, job.version))) return { report: { outcome: 'conflict' } };
    deps.log?.warn(
      'the job was written by a clock ahead of this one: its due time is re-based on this clock',
      {
        jobId: job.id,
        aheadMs: job.updatedAt - now,
        dueInMs: rebased.job.nextRunAt - now,
      },
    );
    return { report: await runStep(deps, { jobId: job.id, version: rebased.job.version }) };
  }
  if (job.parked) {
    // A parked job's message (the sweeper's nudge): it leaves the line of parked jobs first, in a
    // commit, so a releaser working on it meanwhile and this worker never both go on with it.
    const unparked = advance(workflow, job, { type: 'unpark' }, now, deps.random);
    if (!(await deps.store.commit(unparked.job, job.version))) return { report: { outcome: 'conflict' } };
    return { report: await runStep(deps, { jobId: job.id, version: unparked.job.version }) };
  }
  if (now >= job.deadlineAt) {
    return {
      report: await commitAndSchedule(
        deps,
        job,
        advance(workflow, job, { type: 'deadline' }, now, deps.random),
      ),
    };
  }
  if (job.status === 'AWAITING_INPUT') return { report: { outcome: 'dropped', reason: 'awaiting-input' } };
  // Not due yet, or a paid call of this job is alive somewhere (its caller keeps `nextRunAt` ahead):
  // never run beside it, whoever sent this message. A caller known to be dead is not waited for.
  if (job.nextRunAt > now + earlyToleranceMs && !callerIsGone(deps, job)) {
    const delayMs = untilDeadline(job, now, job.nextRunAt - now);
    await deps.queue.send(message, Math.min(delayMs, deps.queue.maxDelayMs));
    return { report: { outcome: 'deferred', reason: 'not-due', delayMs } };
  }

  const step = findStep(workflow, job.step);
  if (!step)
    return fail(workflow, { kind: 'definition', message: `no step "${job.step}"`, retryable: false });

  // The step's answer came back earlier but could not be stored: store it now, never call again.
  if (job.unsaved && job.unsaved.step === job.step)
    return { report: await storeKeptAnswer(deps, workflow, job, job.unsaved) };

  const skipped = step.skipWhen ? await skipLeftOut(deps, workflow, job, now) : undefined;
  if (skipped) return { report: skipped };

  if (costCapReached(job))
    return {
      report: await commitAndSchedule(
        deps,
        job,
        advance(workflow, job, { type: 'cost-cap' }, now, deps.random),
      ),
    };

  const apiKey = await deps.keys.getKey(job.tenant);
  if (!apiKey) {
    const failure: StepFailure = {
      kind: 'auth',
      message: `no API key is configured for tenant "${job.tenant}"`,
      retryable: false,
    };
    return fail(workflow, failure);
  }
  return { workflow, job, step, apiKey, now };
}

/** A step's call made: the job as last committed, and the event its outcome is committed as. */
interface Called {
  current: Job;
  /** The call was a create or an update (its intent recorded), not a read. */
  creates: boolean;
  input: unknown;
  outcome: StepOutcome;
  event: EngineEvent;
}

/**
 * The call: one upstream interaction. A billed call (a create, an update, or a billed read) is
 * claimed first, on the version read, so only one of two deliveries of that version sends it; a
 * create's intent is recorded with the claim (a repeat after a crash is counted), and the job's
 * nextRunAt is kept ahead while the call is alive. The answer is stored before its decision is committed.
 */
async function callStep(
  deps: EngineDeps,
  { workflow, job, step, apiKey, now, bucket }: ReadyStep & { bucket: string },
): Promise<Called | { report: StepReport }> {
  const input = await loadInput(deps, job);
  const ctx = await stepContext(deps, job, input, now, step);
  const outputName = step.outputName?.(ctx) ?? step.name;

  // Which upstream serves the job is recorded with the step's first commit (so its outputs can say).
  const upstream = deps.upstreamOf?.(apiKey);
  let current = upstream && !sameUpstream(job.upstream, upstream) ? { ...job, upstream } : job;
  const creates = stepEffect(step, step.kind === 'request' ? step.operationOf(ctx) : undefined) !== 'read';
  const allowanceMs = deps.inFlight?.allowanceMs ?? inFlightAllowanceMs;
  let heartbeat: Heartbeat | undefined;
  // A create or an update is never a download, so every call that records an intent is claimed too.
  if (billsUnits(step)) {
    // The claim: one commit on the version read, so of two deliveries of this version only one calls.
    // `creates` decides only whether it records an intent (a read records none).
    const started = advance(
      workflow,
      current,
      { type: 'call-started', output: outputName, allowanceMs, by: deps.inFlight?.by, read: !creates },
      now,
      deps.random,
    );
    if (!(await deps.store.commit(started.job, job.version))) return { report: { outcome: 'conflict' } };
    current = started.job;
    heartbeat = startHeartbeat(
      deps,
      workflow,
      current,
      allowanceMs,
      deps.inFlight?.heartbeatMs ?? inFlightHeartbeatMs,
    );
  }

  let executed: Executed;
  try {
    executed = await executeStep(deps, current, step, ctx, outputName, apiKey);
  } finally {
    if (heartbeat) current = await heartbeat.stop();
  }
  let { outcome } = executed;
  if (outcome.type === 'error' && outcome.failure.kind === 'throttled')
    await deps.rateLimiter.throttled(bucket, now);
  else if (step.kind !== 'fetch') await deps.rateLimiter.succeeded(bucket, now);
  // An answer to a read that cannot be parsed is a passing fault like any other: reading again is free.
  if (outcome.type === 'error' && outcome.failure.kind === 'protocol' && !creates) {
    outcome = { ...outcome, failure: { ...outcome.failure, retryable: true } };
  }
  // The upstream answered that it did not do the call (throttled, busy, refused): nothing was
  // created, so the retry is not a repeat.
  let event: EngineEvent =
    creates && outcome.type === 'error' && notDone(outcome.failure, outcome.usage)
      ? {
          type: 'call-refused',
          output: outputName,
          failure: outcome.failure,
          usage: outcome.usage,
          before: job,
        }
      : outcome;

  // The answer is in (and paid for): a store that fails now must not cost the call again.
  if (outcome.type === 'decision' && executed.save) {
    const { key, body } = executed.save;
    try {
      await deps.reports.put(key, body, 'application/json');
    } catch (error) {
      event = unsavedEvent(
        { step: current.step, decision: outcome.decision, output: key, data: body },
        error,
        outcome.usage,
        step.kind === 'fetch' ? undefined : (step.operation ?? undefined),
      );
    }
  }
  return { current, creates, input, outcome, event };
}

/**
 * Learn and commit: the next state by advance() (a poll aimed by the learned timing), committed on
 * the version read; a finished task teaches the timing, and a call whose outcome lost to another
 * writer still adds its cost to the job.
 */
async function learnAndCommit(
  deps: EngineDeps,
  { workflow, job, step, bucket }: ReadyStep & { bucket: string },
  { current, creates, input, outcome, event }: Called,
): Promise<StepReport> {
  const after = deps.clock.now();
  // Only a step's decision can schedule a poll (an error is retried on its backoff).
  const timer =
    event.type === 'decision'
      ? (deps.pollTimerOf?.(current) ?? (await pollTimer(deps, workflow, bucket, after, current.priority)))
      : undefined;
  const report = await commitOutcome(deps, workflow, current, event, after, input, timer, bucket);
  if (report.outcome === 'committed') await learnDuration(deps, step, current, outcome, after);
  if (report.outcome === 'conflict' && outcome.type !== 'deadline' && (outcome.usage?.calls ?? 0) > 0) {
    // Another process changed the job while the call was under way (a cancel, a take-over, its
    // deadline): its outcome is dropped, but what it cost is still the job's, and a paid answer is
    // kept for a retry of a job finished under it. Loaded on first use: a lost commit is rare.
    const { recordLateUsage } = await import('./late-usage');
    await recordLateUsage(
      deps,
      workflow,
      job.id,
      outcome.usage ?? {},
      creates ? lateAnswerOf(current, event) : undefined,
      current.inFlightSince,
    );
  }
  return report;
}

/**
 * Poll timing learned from the upstream (see poll-plan.ts), or undefined (the declared schedules)
 * without a store. What a poll is worth depends on the key (admission/poll-price.ts): whether the
 * job's time decides when the key's work ends, and whether its budget is saturated.
 */
async function pollTimer(
  deps: EngineDeps,
  workflow: Workflow,
  bucket: string,
  now: number,
  priority?: Job['priority'],
): Promise<PollTimer | undefined> {
  const stats = deps.pollStats;
  if (!stats) return undefined;
  const keys = workflow.steps.flatMap((step) => stepStatsKey(deps.pollStatsScope, step) ?? []);
  if (keys.length === 0) return undefined;
  let sketches: Map<string, DurationSketch>;
  let saturated: boolean;
  let budget: { tokens: number; ratePerSecond: number } | undefined;
  try {
    sketches = await stats.load(keys);
    saturated = (await deps.rateLimiter.saturated?.(bucket, now)) ?? false;
    budget = await deps.rateLimiter.budget?.(bucket, now);
  } catch (error) {
    deps.log?.warn('could not read the learned poll timing; using the declared schedules', {
      error: errorMessage(error),
    });
    return undefined;
  }
  const sketchOf = (step: Step) => {
    const key = stepStatsKey(deps.pollStatsScope, step);
    return key === undefined ? undefined : sketches.get(key);
  };
  const meanOf = (operation: string) => {
    const sketch = sketches.get(pollStatsKey(deps.pollStatsScope, operation));
    return sketch && sketch.count > 0 ? sketchMean(sketch) : undefined;
  };
  const work = deps.keyWork?.(bucket);
  return (step, timing) => {
    const sketch = sketchOf(step);
    const price = pollPrice({
      workflow,
      step,
      sketch,
      meanOf,
      runningAtMs: timing.lastPollAtMs,
      ratePerSecond: budget?.ratePerSecond ?? 0,
      saturated,
      waiting: budget ? -budget.tokens : undefined,
      work,
      now,
      allowance: deps.pollAllowance ?? defaultPollAllowance,
      priority,
    });
    return learnedPollDelay({ sketch, policy: pollPolicyOf(step), ...price, ...timing });
  };
}

/** A poll found its task finished: teach the store how long the task took (bounded by the poll before). */
async function learnDuration(
  deps: EngineDeps,
  step: Step,
  job: Job,
  outcome: StepOutcome,
  at: number,
): Promise<void> {
  const key = stepStatsKey(deps.pollStatsScope, step);
  const startedAt = job.pollStartedAt;
  if (!deps.pollStats || key === undefined || startedAt === undefined) return;
  if (outcome.type !== 'decision' || outcome.decision.type === 'poll') return;
  const lower = job.lastPolledAt === undefined ? 0 : job.lastPolledAt - startedAt;
  try {
    await deps.pollStats.record(key, lower, at - startedAt, at);
  } catch (error) {
    deps.log?.warn('could not record a task duration', {
      jobId: job.id,
      error: errorMessage(error),
    });
  }
}

/** Whether the paid call marked on the job was made by a process known to have died. */
function callerIsGone(deps: EngineDeps, job: Job): boolean {
  if (job.inFlightSince === undefined || job.inFlightBy === undefined) return false;
  try {
    return deps.inFlight?.isGone?.(job.inFlightBy) ?? false;
  } catch {
    return false;
  }
}

interface Heartbeat {
  /** Stops beating; resolves with the job as last committed (the one to commit the outcome over). */
  stop(): Promise<Job>;
}

/** While a paid call is alive, push its job's nextRunAt out by the allowance every `everyMs`. */
function startHeartbeat(
  deps: EngineDeps,
  workflow: Workflow,
  job: Job,
  allowanceMs: number,
  everyMs: number,
): Heartbeat {
  let current = job;
  let lost = false;
  let beating: Promise<void> = Promise.resolve();
  const beat = async () => {
    if (lost) return;
    const next = advance(
      workflow,
      current,
      { type: 'call-alive', allowanceMs },
      deps.clock.now(),
      deps.random,
    );
    try {
      if (await deps.store.commit(next.job, current.version)) current = next.job;
      else lost = true; // another writer (a cancel): the outcome's commit will find out too
    } catch (error) {
      deps.log?.warn('could not extend the in-flight allowance of a call; will try again', {
        jobId: job.id,
        error: errorMessage(error),
      });
    }
  };
  const timer = setInterval(() => {
    beating = beating.then(beat);
  }, everyMs);
  timer.unref?.();
  return {
    async stop() {
      clearInterval(timer);
      await beating;
      return current;
    },
  };
}

/**
 * The answer of a paid call (its job was marked in flight for it) whose outcome lost to another
 * writer: what a retry of the job goes on from, so the call is not paid for again.
 */
function lateAnswerOf(current: Job, event: EngineEvent): LateAnswer | undefined {
  if (current.inFlightSince === undefined) return undefined;
  const run = current.runs?.length ?? 0;
  if (event.type === 'unsaved') return { kept: event.unsaved, run };
  if (event.type !== 'decision') return undefined;
  return { kept: { step: current.step, decision: event.decision, output: event.output }, run };
}

function unknownWorkflow(name: string): Workflow {
  return {
    name,
    version: 0,
    description: '',
    input: undefined as never,
    steps: [],
    report: () => ({ title: name, markdown: '' }),
  };
}

/**
 * Advance `previous` by `event` and commit it. A workflow finished by the event gets its report
 * written first; when the report store fails, the job keeps the answer (`unsaved`) and tries again
 * on its backoff, so the step's paid call is never made again for it.
 */
async function commitOutcome(
  deps: EngineDeps,
  workflow: Workflow,
  previous: Job,
  event: EngineEvent,
  now: number,
  input: unknown,
  timer?: PollTimer,
  bucket?: string,
): Promise<StepReport> {
  let advanced = advance(workflow, previous, event, now, deps.random, timer);
  if (advanced.completed && event.type === 'decision') {
    try {
      const job = advanced.job;
      const keys = await deps.writeReport(deps.reports, workflow, job, input ?? (await loadInput(deps, job)));
      advanced = advance(workflow, previous, { ...event, reportOutputs: keys }, now, deps.random, timer);
    } catch (error) {
      const unsaved = { step: previous.step, decision: event.decision, output: event.output };
      advanced = advance(
        workflow,
        previous,
        unsavedEvent(unsaved, error, event.usage, undefined, 'the report'),
        now,
        deps.random,
      );
    }
  }
  if (bucket !== undefined) advanced = await reserveNextToken(deps, workflow, bucket, advanced, now);
  return commitAndSchedule(deps, previous, advanced);
}

/** Answers kept in a job record larger than this are not kept (a DynamoDB item holds 400 KB in all). */
export const maxUnsavedBytes = 256 * 1024;

/** The event for an answer (or a report) the report store could not take. */
function unsavedEvent(
  unsaved: UnsavedAnswer,
  error: unknown,
  usage: Partial<JobUsage> | undefined,
  operationId: string | undefined,
  what = 'its answer',
): EngineEvent {
  const reason = errorMessage(error);
  const size = unsaved.data === undefined ? 0 : Buffer.byteLength(unsaved.data);
  if (size > maxUnsavedBytes) {
    const failure: StepFailure = {
      kind: 'storage',
      message: `${what} could not be stored (${reason}), and at ${Math.round(size / 1024)} KB it is too large to keep in the job; opflow retry calls the upstream again`,
      retryable: false,
      operationId,
    };
    return { type: 'error', failure, usage };
  }
  const failure: StepFailure = {
    kind: 'storage',
    message: `${what} could not be stored (${reason}); the answer is kept in the job and stored once the report store can be written (opflow resume), without calling the upstream again`,
    retryable: true,
    operationId,
  };
  return { type: 'unsaved', unsaved, failure, usage };
}

/** A job whose step's answer is kept (`unsaved`): store it and apply its decision; no upstream call. */
async function storeKeptAnswer(
  deps: EngineDeps,
  workflow: Workflow,
  job: Job,
  unsaved: UnsavedAnswer,
): Promise<StepReport> {
  let event: EngineEvent = { type: 'decision', decision: unsaved.decision, output: unsaved.output };
  if (unsaved.output !== undefined && unsaved.data !== undefined) {
    try {
      await deps.reports.put(unsaved.output, unsaved.data, 'application/json');
    } catch (error) {
      event = unsavedEvent(unsaved, error, undefined, job.lastError?.operationId);
    }
  }
  return commitOutcome(deps, workflow, job, event, deps.clock.now(), undefined);
}

async function commitAndSchedule(deps: EngineDeps, previous: Job, change: Advanced): Promise<StepReport> {
  // The commit that schedules the next look counts its message; past the budget it fails the job.
  const advanced = countMessage(change, deps.messageBudget ?? defaultMessageBudget, change.job.updatedAt);
  const { job } = advanced;
  if (!(await deps.store.commit(job, previous.version))) return { outcome: 'conflict' };
  deps.onJobChange?.(job);
  const fields = {
    jobId: job.id,
    workflow: job.workflow,
    step: job.step,
    status: job.status,
    version: job.version,
  };
  deps.metrics?.count('StepsRun', 1, { workflow: job.workflow });
  if (job.status === 'SUCCEEDED') {
    deps.metrics?.count('JobSucceeded', 1, { workflow: job.workflow });
    deps.log?.info('job succeeded', fields);
  } else if (job.status === 'FAILED') {
    deps.metrics?.count('JobFailed', 1, { workflow: job.workflow });
    if (job.lastError?.kind === 'message-budget')
      deps.metrics?.count('MessageBudgetExceeded', 1, { workflow: job.workflow });
    deps.log?.warn('job failed', { ...fields, error: job.lastError });
  } else if (job.lastError && job.lastError.at === job.updatedAt) {
    deps.metrics?.count('Retries', 1, { workflow: job.workflow });
    deps.log?.info('step will be retried', { ...fields, error: job.lastError, nextRunAt: job.nextRunAt });
  }
  if (advanced.delayMs !== undefined && !isTerminal(job.status)) {
    await deps.queue.send(
      { jobId: job.id, version: job.version },
      Math.min(delayLeft(deps, previous, job, advanced.delayMs), deps.queue.maxDelayMs),
    );
  }
  return { outcome: 'committed', job };
}

/**
 * The part of a wait still to come when its message is sent. The wait was counted from the clock
 * reading of the commit (its `updatedAt`); the report writes and the commit since then have used
 * part of it, and a queue that rounds delays up to whole seconds (SQS) would otherwise add that
 * time to a step that is due. The message still never comes before the time the commit set.
 */
function delayLeft(deps: EngineDeps, previous: Job, job: Job, delayMs: number): number {
  if (job.version <= previous.version) return delayMs;
  return Math.max(0, delayMs - Math.max(0, deps.clock.now() - job.updatedAt));
}

async function loadInput(deps: EngineDeps, job: Job): Promise<unknown> {
  if ('inline' in job.input) return job.input.inline;
  const stored = await deps.reports.get(job.input.ref);
  if (!stored) throw new Error(`input of job ${job.id} is missing from the report store (${job.input.ref})`);
  return JSON.parse(Buffer.from(stored.body).toString('utf8'));
}

/**
 * A step the job's input and state leave out (its `skipWhen`) is skipped before anything else: no
 * key, no token, no call. Undefined when the job's step is to run.
 */
async function skipLeftOut(
  deps: EngineDeps,
  workflow: Workflow,
  job: Job,
  now: number,
): Promise<StepReport | undefined> {
  const input = await loadInput(deps, job);
  const state = { job, input, context: job.context, selections: job.selections, now };
  const reasons = stepsLeftOut(workflow, state);
  if (reasons[job.step] === undefined) return undefined;
  return commitAndSchedule(deps, job, advance(workflow, job, { type: 'skip', reasons }, now, deps.random));
}

async function stepContext(
  deps: EngineDeps,
  job: Job,
  input: unknown,
  now: number,
  step: Step,
): Promise<StepContext> {
  const outputs: Record<string, unknown> = {};
  for (const { name } of step.needs ?? []) {
    const stored = await deps.reports.get(stepOutputKey(job.id, name));
    if (stored) outputs[name] = JSON.parse(Buffer.from(stored.body).toString('utf8'));
  }
  return stepContextOf({ job, input, context: job.context, selections: job.selections, outputs, now });
}

function usageOf(call: CallUsage | undefined, tokens = 0): Partial<JobUsage> {
  if (!call) return {};
  return {
    calls: 1,
    failedCalls: call.ok ? 0 : 1,
    throttledCalls: call.errorKind === 'throttled' ? 1 : 0,
    billedUnits: call.billedUnits,
    callMs: call.durationMs,
    tokens,
  };
}

function failureOf(error: unknown, operationId: string | undefined): StepFailure {
  if (isOpenPlatformError(error)) {
    return {
      kind: error.kind,
      message: error.message,
      retryable: error.retryable,
      code: error.code,
      httpStatus: error.httpStatus,
      correlationId: error.correlationId,
      operationId: error.operationId ?? operationId,
      retryAfterMs: error.retryAfterMs,
      unsent: error.unsent || undefined,
    };
  }
  const message = errorMessage(error);
  return { kind: 'internal', message, retryable: false, operationId };
}

/** A step's outcome, and the step data to store before its decision is committed. */
interface Executed {
  outcome: StepOutcome;
  save?: { key: string; body: string } | undefined;
}

/**
 * A stream whose text is published as it arrives (deps.partialAnswers), the last of it before the
 * step's decision is committed; the committed result stays the stream's whole answer.
 */
async function streamWithPublisher<T>(
  deps: EngineDeps,
  job: Job,
  step: string,
  stream: (onText: ((delta: string) => void) | undefined) => Promise<T>,
): Promise<T> {
  if (!deps.partialAnswers) return stream(undefined);
  const publisher = createAnswerPublisher(
    deps.partialAnswers,
    {
      jobId: job.id,
      tenant: job.tenant,
      batchId: job.batchId,
      workflow: job.workflow,
      step,
      status: job.status,
      version: job.version,
    },
    deps.clock,
  );
  try {
    return await stream((delta) => publisher.add(delta));
  } finally {
    await publisher.finish();
  }
}

/** The one upstream interaction of a step, turned into an outcome. Never throws. */
async function executeStep(
  deps: EngineDeps,
  job: Job,
  step: Step,
  ctx: StepContext,
  outputName: string,
  apiKey: string,
): Promise<Executed> {
  if (step.kind === 'fetch') return fetchAttachment(deps, job, step, ctx);
  const operationId = step.kind === 'request' ? step.operationOf(ctx) : step.operation;
  let usage: Partial<JobUsage> = {};
  try {
    let decision: StepDecision;
    let data: unknown;
    const call = () =>
      step.kind === 'request'
        ? deps.client.request(step.operationOf(ctx), step.request(ctx), { apiKey, signal: deps.callSignal })
        : step.kind === 'stream'
          ? streamWithPublisher(deps, job, step.name, (onText) =>
              deps.client.stream(step.operation, step.request(ctx), {
                apiKey,
                signal: deps.callSignal,
                onText,
              }),
            )
          : deps.client.call(step.operation, step.request(ctx), { apiKey, signal: deps.callSignal });
    let result: Awaited<ReturnType<typeof call>>;
    try {
      result = await call();
    } catch (error) {
      // A rotated key: read it again once, and retry right away with the new one.
      if (!isOpenPlatformError(error) || error.kind !== 'auth') throw error;
      usage = usageOf({
        operationId: operationId ?? '',
        durationMs: 0,
        billedUnits: 0,
        ok: false,
        errorKind: 'auth',
      });
      let fresh: string | undefined;
      try {
        fresh = await deps.keys.refresh(job.tenant);
      } catch (refreshError) {
        // The key store itself failed (a passing outage): worth another try, unlike the 401.
        const reason = errorMessage(refreshError);
        const failure: StepFailure = {
          kind: 'key-source',
          message: `could not re-read the API key after a 401: ${reason}`,
          retryable: true,
          operationId,
        };
        return { outcome: { type: 'error', failure, usage } };
      }
      if (!fresh || fresh === apiKey) throw error;
      apiKey = fresh;
      result = await call();
    }
    if ('text' in result) {
      const { usage: callUsage, ...answer } = result;
      usage = sumUsage(usage, usageOf(callUsage, answer.tokens.total));
      data = answer;
      decision = (step.decide as (r: typeof answer, c: StepContext) => StepDecision)(answer, ctx);
    } else {
      usage = sumUsage(usage, usageOf(result.usage));
      data = result.data;
      decision = (step.decide as (d: unknown, c: StepContext) => StepDecision)(result.data, ctx);
    }
    // The platform's own cost of a finished task (not of each poll that saw it still running).
    const taskCost = decision.type === 'poll' ? undefined : taskCostOf(data);
    if (taskCost !== undefined) usage = sumUsage(usage, { taskCost });
    if (step.keep === false) return { outcome: { type: 'decision', decision, usage } };
    // Stored by the runner, which keeps the answer in the job if the report store fails.
    const output = stepOutputKey(job.id, outputName);
    return {
      outcome: { type: 'decision', decision, usage, output },
      save: { key: output, body: JSON.stringify(data, null, 2) },
    };
  } catch (error) {
    return failedCall(error, usage, operationId);
  }
}

/** A call that threw: its failure, with the usage so far and the failed call's own. */
function failedCall(error: unknown, usage: Partial<JobUsage>, operationId: string | undefined): Executed {
  if (isOpenPlatformError(error)) {
    usage = sumUsage(usage, {
      calls: 1,
      failedCalls: 1,
      throttledCalls: error.kind === 'throttled' ? 1 : 0,
      billedUnits: error.usage?.billedUnits ?? 0,
    });
  }
  return { outcome: { type: 'error', failure: failureOf(error, operationId), usage } };
}

/** A download step: the document fetched and kept in the report store under the job's attachments. */
async function fetchAttachment(
  deps: EngineDeps,
  job: Job,
  step: Extract<Step, { kind: 'fetch' }>,
  ctx: StepContext,
): Promise<Executed> {
  let usage: Partial<JobUsage> = {};
  try {
    const url = step.url(ctx);
    const document = await deps.client.fetchDocument(url, { signal: deps.callSignal });
    usage = usageOf(document.usage);
    const fileName = safeFileName(step.fileName?.(ctx, document.fileName) ?? document.fileName);
    const key = attachmentKey(job.id, fileName);
    try {
      await deps.reports.put(key, document.body, document.contentType);
    } catch (error) {
      // Downloading again costs nothing: retried like any passing fault.
      const reason = errorMessage(error);
      const failure: StepFailure = {
        kind: 'storage',
        message: `the downloaded ${fileName} could not be stored (${reason})`,
        retryable: true,
      };
      return { outcome: { type: 'error', failure, usage } };
    }
    const attachment = { key, fileName, contentType: document.contentType };
    const decision = step.decide?.(attachment, ctx) ?? { type: 'next' };
    return { outcome: { type: 'decision', decision, usage, output: key } };
  } catch (error) {
    return failedCall(error, usage, undefined);
  }
}

/** `task_cost` (seconds) of an answer that reports one: a number or a numeric string, not negative. */
export function taskCostOf(data: unknown): number | undefined {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const value = (data as Record<string, unknown>)['task_cost'];
  const seconds = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

function sumUsage(a: Partial<JobUsage>, b: Partial<JobUsage>): Partial<JobUsage> {
  const sum: Partial<JobUsage> = { ...a };
  for (const [key, value] of Object.entries(b) as [keyof JobUsage, number][])
    sum[key] = (sum[key] ?? 0) + value;
  return sum;
}

/** Attachment names come from upstream headers: keep them to one safe path segment. */
function safeFileName(name: string): string {
  const cleaned = name
    .replace(/[/\\]/g, '_')
    .replace(/[^\w.\- ]/g, '_')
    .replace(/^\.+/, '')
    .trim();
  return cleaned.length > 0 ? cleaned.slice(0, 120) : 'document';
}
