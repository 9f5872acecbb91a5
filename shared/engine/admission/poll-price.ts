/**
 * What a poll is worth: the inputs of a poll plan (poll-plan.ts) for one job, from its key's state.
 *
 * A plan trades a call against its job's time. Which trade depends on two things, both measured:
 * - whether the job's own time decides when its key's work ends (it is alone on the key, or its
 *   remaining chain, with its running task's expected rest given how long it has run, is at least
 *   the time the key needs for every job's calls and the longest chain of any job): then its polls
 *   may spend the calls `PollAllowance.critical` allows over its minimum; otherwise it has slack,
 *   and spends that instead of calls;
 * - whether the key's budget is saturated: then a wasted call also pushes every call waiting in
 *   line back by one token interval, and that time is added to a call's price.
 */
import { pollPolicyOf } from '../advance';
import type { JobPriority } from '../job-record';
import { type PlanTarget, residualMs, taskLattice } from '../poll-plan';
import { type DurationSketch, sketchMean } from '../poll-timing';
import type { Step, Workflow } from '../workflow';

/**
 * The calls over its minimum a job whose time decides when its key's work ends may spend on polls,
 * as a share of the minimum (`critical`; default 0.3, the lone-job goal of calls at most 1.3 of the
 * minimum). A user's price of a call, not a fit to an upstream: the plan finds the least delay
 * within it on any distribution of task times.
 */
export interface PollAllowance {
  critical: number;
}

export const defaultPollAllowance: PollAllowance = { critical: 0.3 };

/** A key's unfinished work as last counted (budget-filler.ts, `planOrder`). */
export interface KeyWork {
  /** Calls the key's unfinished jobs still have to make, at the least. */
  callsLeft: number;
  /** Those calls at the key's rate. */
  drainMs: number;
  /** The longest chain one job still has to walk (its calls at the rate, its tasks' mean times). */
  longestChainMs: number;
  /** When the key's work is expected to end, from the count (the drain, or the expected longest chain). */
  endMs?: number | undefined;
  /** The unfinished jobs counted. */
  jobs?: number | undefined;
  /** Clock time of the count (the times above are from then). */
  countedAt?: number | undefined;
}

/** The steps from `stepName` to the workflow's end (all of them when the name is not found). */
export function remainingSteps(workflow: Workflow, stepName: string): Workflow['steps'] {
  const index = workflow.steps.findIndex((step) => step.name === stepName);
  return workflow.steps.slice(Math.max(0, index));
}

/** Polls per task a share of the workflow's minimum calls allows: 1 + share × calls / polled steps. */
export function pollsPerTask(workflow: Workflow, share: number): number {
  const calls = workflow.steps.filter((step) => step.kind !== 'fetch').length;
  const polled = workflow.steps.filter((step) => step.poll && step.kind !== 'fetch').length;
  return 1 + (Math.max(0, share) * calls) / Math.max(1, polled);
}

export interface PriceInput {
  workflow: Workflow;
  /** The polled step the job waits on. */
  step: Step;
  /** Its operation's learned sketch. */
  sketch: DurationSketch | undefined;
  /** The learned mean task time of an operation (undefined: the declared first delay stands in). */
  meanOf: (operation: string) => number | undefined;
  /** When (from its task's start) a poll last found the task running; 0: none. */
  runningAtMs: number;
  /** The key's rate, calls/s. */
  ratePerSecond: number;
  /** Whether the key's budget is saturated now. */
  saturated: boolean;
  /** Calls reserved ahead in the key's line (the bucket's debt), when known. */
  waiting?: number | undefined;
  /** The key's unfinished work; undefined: not counted. */
  work: KeyWork | undefined;
  /** Clock time now (the count's times are from its own). */
  now: number;
  allowance: PollAllowance;
  /** The job's priority: a `high` job's own time is what its user waits for, so it has no slack. */
  priority?: JobPriority | undefined;
}

/**
 * The poll plan's inputs for one job. A job whose time decides when its key's work ends spends
 * the calls its allowance gives (`critical`); any other has slack (the key's work ends later than
 * its chain) and spends it instead of calls: each of its tasks left may take its share of the
 * slack in delay, and the plan polls as little as that allows. A
 * saturated budget adds a token interval per call waiting in line to a call's price.
 */
export function pollPrice(input: PriceInput): {
  target: PlanTarget;
  extraPriceMs: number;
  awaitSample: boolean;
} {
  const intervalMs = input.ratePerSecond > 0 ? 1000 / input.ratePerSecond : 0;
  const extraPriceMs = input.saturated ? intervalMs * Math.max(1, Math.round(input.waiting ?? 1)) : 0;
  const awaitSample = sharesProbes(input);
  const { slackMs, tasksLeft } = slackOf(input, intervalMs);
  if (slackMs <= 0)
    return {
      target: { pollsPerTask: pollsPerTask(input.workflow, input.allowance.critical) },
      extraPriceMs,
      awaitSample,
    };
  return { target: { delayMs: slackMs / Math.max(1, tasksLeft) }, extraPriceMs, awaitSample };
}

/**
 * Whether a job polling an operation nothing is known of yet may leave the first look to the
 * filler's probes and wait for what they learn. Before the first task of an operation has ended,
 * a poll's chance to find its task done is unknown, and in a batch every job started about then
 * would learn the same from it: one poll of the job started first (the filler's probe, once a
 * second, `probeUnknown` in budget-filler.ts) tells what the others' polls would, and each of
 * theirs costs a token the batch needs. So on a key whose work is counted (the filler runs and
 * probes), a job without a sample polls a step later on the declared schedule, and the filler
 * re-aims it by the plan as soon as a task has ended (a job alone on the key is probed the same
 * way: the probes come sooner than the declared first poll). Where nothing counts the key's work
 * (aws), it polls on the declared schedule.
 */
export function sharesProbes(input: Pick<PriceInput, 'sketch' | 'work'>): boolean {
  if (input.sketch && input.sketch.count > 0) return false;
  return input.work !== undefined;
}

/**
 * How much later than its own chain the key's work ends (0 when the job decides it: it is `high`
 * (its own time is what its user waits for), alone on the key, or its chain, with its running task's expected rest given how long it has run, is
 * at least when the key's work is expected to end), and its polled tasks left.
 * Without a count (aws): no slack.
 */
export function slackOf(input: PriceInput, intervalMs: number): { slackMs: number; tasksLeft: number } {
  const { work } = input;
  const left = remainingSteps(input.workflow, input.step.name);
  const tasksLeft = left.filter((step) => step.poll && step.kind !== 'fetch').length;
  if (!work || input.priority === 'high') return { slackMs: 0, tasksLeft };
  const calls = left.filter((step) => step.kind !== 'fetch').length;
  if (work.callsLeft <= calls || (work.jobs ?? 2) <= 1) return { slackMs: 0, tasksLeft };
  const lattice = input.runningAtMs > 0 && input.sketch ? taskLattice(input.sketch) : undefined;
  const rest =
    (lattice && residualMs(lattice, input.runningAtMs)) ??
    (input.sketch && input.sketch.count > 0 ? sketchMean(input.sketch) : undefined) ??
    pollPolicyOf(input.step).firstDelayMs;
  let chainMs = calls * intervalMs + rest;
  for (const step of left.slice(1)) {
    if (!step.poll || step.kind === 'fetch' || step.operation === undefined) continue;
    chainMs += input.meanOf(step.operation) ?? pollPolicyOf(step).firstDelayMs;
  }
  // One call's time of tolerance: the count and the sketch may be a round apart.
  const sinceCount = Math.max(0, input.now - (work.countedAt ?? input.now));
  const slackMs = (work.endMs ?? Math.max(work.drainMs, work.longestChainMs)) - sinceCount - chainMs;
  return { slackMs: slackMs <= intervalMs ? 0 : slackMs, tasksLeft };
}
