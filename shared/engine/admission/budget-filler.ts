/**
 * Filling the key's rate budget. The runner aims each poll at the learned timing when it
 * schedules it; the budget filler looks again at what waits, a few times a second, and moves it:
 * - polls already scheduled are re-aimed when the learned estimate now puts them earlier than their
 *   time (a first wave scheduled on the declared prior, before any task of the operation finished):
 *   a poll scheduled later than even the saturated aim (the 0.9 quantile) is moved to it;
 * - while the budget has room (fewer calls due within the next window than it sustains), polls due
 *   later are pulled forward into the spare calls, the most likely done first (the learned share of
 *   tasks done by now among those still running at the job's last poll), jobs nearer the end first
 *   on a tie. An operation nothing is known of yet gets one probe at a time (the job waiting
 *   longest), so the first task found done teaches the estimate that pulls the others.
 * While the budget is saturated nothing is pulled: the order of the calls is then the runner's
 * (tokens reserved farther ahead for calls that advance a job than for speculative polls and new
 * jobs' first calls, see `reserveHorizonMs` in runner.ts).
 *
 * Near the end of a key's work the order turns round (`planOrder`): once the calls left to make at
 * the key's rate would take hardly longer than the longest chain of calls and tasks a single job
 * still has to walk, the jobs with the most work left go first (longest remaining work first) and
 * the jobs not started yet are admitted at once: otherwise the last jobs start late, walk their
 * chains alone and leave the budget idle at the end (the runner reads the order through
 * `EngineDeps.callOrder`).
 *
 * `planFill` is pure (it decides); `BudgetFiller` reads the store, commits each move through
 * advance() ('reschedule') and sends the job's message, whose earlier one then finds a newer
 * version and is dropped.
 */

import { errorMessage } from '../../errors/error-message';
import { advance, findStep, pollPolicyOf, waitsForPoll } from '../advance';
import type { EngineDeps } from '../deps';
import { plannedPollAt, sketchPlan } from '../poll-plan';
import { pollStatsKey } from '../poll-stats';
import { type DurationSketch, doneShare, sketchMean, sketchSd } from '../poll-timing';
import type { FillView, WorkGroup, WorkScan } from '../ports';
import type { Workflow, WorkflowRegistry } from '../workflow';
import { callsOwed } from './fair-share';
import {
  defaultPollAllowance,
  type KeyWork,
  type PollAllowance,
  pollPrice,
  pollsPerTask,
  remainingSteps,
} from './poll-price';
import { keyFingerprint } from './rate-bucket';

export interface FillOptions {
  /** How far ahead waiting jobs are looked at. Default: 10 minutes. */
  horizonMs?: number | undefined;
  /** Calls due within this window count against the budget's room now. Default: 1 s. */
  windowMs?: number | undefined;
  /** Jobs looked at per round. Default: 1,000. */
  limit?: number | undefined;
  /**
   * An operation nothing is known of is probed at most once in this long, and a job only after
   * waiting this long since it was last looked at (or half its task's running time then, if more).
   * Default: 1 s.
   */
  probeEveryMs?: number | undefined;
  /** A scheduled poll is re-aimed only when the estimate puts it this much earlier (and a quarter of its wait). Default: 1 s. */
  reaimMarginMs?: number | undefined;
  /**
   * A fixed turn instead of the learned one: the order turns to longest remaining work first once
   * the calls left take at most this many times the longest chain left. Default: none (the turn
   * is derived from the learned task times, see `planOrder`). 0: never.
   */
  endgameSlack?: number | undefined;
  /** How often the unfinished work is counted (clock time). Default: 2 s. */
  workEveryMs?: number | undefined;
}

const defaults = {
  horizonMs: 10 * 60_000,
  windowMs: 1_000,
  limit: 1_000,
  probeEveryMs: 1_000,
  reaimMarginMs: 1_000,
  endgameSlack: undefined as number | undefined,
  workEveryMs: 2_000,
};

/**
 * The order calls wait in while a key's budget is saturated (runner.ts, `waitPriority`):
 * - `finish-first` (the default): calls that advance a job before speculative polls, jobs with
 *   fewer steps left first, new jobs' first calls last, so jobs finish early and a large batch is
 *   admitted at the pace the budget sustains;
 * - `longest-first`, near the end of the key's work: jobs with more steps left first, new jobs'
 *   first calls before all (they have the most left), so the longest chains start and move first
 *   and the batch's makespan stays near the bound.
 */
export type CallOrder = 'finish-first' | 'longest-first';

export interface OrderPlan {
  order: CallOrder;
  /** The calls the unfinished jobs still have to make at the least (one per step). */
  callsLeft: number;
  /** How long those calls take at the budget's rate. */
  drainMs: number;
  /** The longest estimated time a single job still needs: its calls at the rate, its tasks' usual times. */
  longestChainMs: number;
  /**
   * When the key's work is expected to end, from now: the drain time, or the expected longest of
   * the unfinished jobs' chains (a chain's mean plus its spread times sqrt(2 ln n) for n jobs, the
   * expected maximum of n draws), whichever is later.
   */
  endMs: number;
  /** The unfinished jobs counted. */
  jobs: number;
}

/**
 * The order for one key, from its unfinished work (`work`: jobs counted by workflow, step and
 * status). Each job still makes at least one call per step from its current one (a job not started
 * from its first), and walks a chain: each of those calls at the key's rate, and each polled step's
 * task for its usual time (`taskMs`: the learned mean of the operation, else the declared first
 * poll delay). While the calls left to make (`drainMs`) outlast the chains, jobs can finish in any
 * order without delaying the last call: finish them first. Once they do not, the longest chains
 * decide when the last job ends: longest remaining work first.
 *
 * When the drain stops outlasting the chains is derived from the learned times: in finish-first
 * order the jobs admitted last start behind the others and end a chain after them, so the turn
 * must come while the drain left still holds the longest chain (`longestChainMs`) and, after it,
 * the expected longest of the n chains left (`expectedLongestMs`: a chain's mean plus its spread
 * times sqrt(2 ln n)). On tasks of 1 to 3 s that is 2.2 to 2.3 chains (the constant fitted there
 * was 2.5); on wide or heavy-tailed task times, whose longest chain of n lies far above the mean
 * one, the turn comes earlier. `slack` fixes the turn instead at that many times the longest
 * chain (0: never).
 */
export function planOrder(input: {
  work: readonly Pick<WorkGroup, 'workflow' | 'step' | 'status' | 'count'>[];
  workflows: WorkflowRegistry;
  ratePerSecond: number;
  taskMs: (operation: string) => number | undefined;
  /** The spread (standard deviation) of an operation's task times; undefined: none known. */
  taskSd?: ((operation: string) => number | undefined) | undefined;
  slack?: number | undefined;
}): OrderPlan {
  const slack = input.slack;
  const callMs = input.ratePerSecond > 0 ? 1000 / input.ratePerSecond : 0;
  let callsLeft = 0;
  let longestChainMs = 0;
  let jobs = 0;
  const chains: { meanMs: number; variance: number }[] = [];
  for (const group of input.work) {
    if (group.count <= 0) continue;
    const workflow = input.workflows.get(group.workflow);
    if (!workflow) continue;
    const left = remainingSteps(workflow, group.step);
    const calls = left.filter((step) => step.kind !== 'fetch').length;
    callsLeft += calls * group.count;
    let chainMs = calls * callMs;
    let variance = 0;
    for (const step of left) {
      if (!step.poll || step.kind === 'fetch' || step.operation === undefined) continue;
      chainMs += input.taskMs(step.operation) ?? pollPolicyOf(step).firstDelayMs;
      variance += (input.taskSd?.(step.operation) ?? 0) ** 2;
    }
    jobs += group.count;
    longestChainMs = Math.max(longestChainMs, chainMs);
    chains.push({ meanMs: chainMs, variance });
  }
  const drainMs = callsLeft * callMs;
  // The expected longest of `jobs` chains: each group's spread counted with the key's whole count.
  const spread = Math.sqrt(2 * Math.log(Math.max(1, jobs)));
  const expectedLongestMs = Math.max(
    0,
    ...chains.map((chain) => chain.meanMs + Math.sqrt(chain.variance) * spread),
  );
  const turnAtMs = slack === undefined ? longestChainMs + expectedLongestMs : slack * longestChainMs;
  const endgame = (slack ?? 1) > 0 && callsLeft > 0 && drainMs <= turnAtMs;
  return {
    order: endgame ? 'longest-first' : 'finish-first',
    callsLeft,
    drainMs,
    longestChainMs,
    endMs: Math.max(drainMs, expectedLongestMs),
    jobs,
  };
}

export interface BudgetView {
  /** Tokens in the bucket now; below zero when tokens are reserved ahead. */
  tokens: number;
  ratePerSecond: number;
}

export interface FillPlan {
  moves: PlannedMove[];
  /**
   * The earliest time a job left where it is could be moved (a poll becoming likely done, a probe
   * becoming due): a loop on a skipping clock steps only to there, not through the whole wait.
   */
  nextChanceAt?: number | undefined;
}

export interface PlannedMove {
  jobId: string;
  /** The version of the job the move was planned on. */
  version: number;
  /** The job's new `nextRunAt`. */
  at: number;
  why: 'pull-forward' | 'probe' | 're-aim' | 'owed';
  /** The operation the job polls. */
  operation: string;
}

interface Candidate {
  job: FillView;
  operation: string;
  /** Where its plan puts its next poll (clock time) while the budget has room; undefined: nothing learned. */
  aimAt: number | undefined;
  /** The learned share of such tasks ended by now, given it ran at its last poll (0: nothing learned). */
  done: number;
  stepsLeft: number;
}

/**
 * What to move now, for the jobs of one key due within the horizon (`jobs`, as `listDue` returns
 * them, or only those due after the window with `dueSoon`). Re-aims first, then pulls in order while
 * the budget has spare calls, then at most one probe per operation nothing is known of (`probedAt`:
 * when each operation was last probed).
 */
export function planFill(input: FillInput): FillPlan {
  const settings: FillSettings = { ...defaults, ...definedOnly(input.options ?? {}) };
  const demand =
    input.dueSoon ??
    input.jobs.filter((job) => job.nextRunAt <= input.now + settings.windowMs && job.tokenAt === undefined)
      .length;
  const room = spareCalls(input.budget, demand, settings.windowMs);
  const survey = surveyPolls(input, settings, room > 0);
  const plan: FillPlan = {
    moves: survey.reaims,
    nextChanceAt: Number.isFinite(survey.nextChanceAt) ? survey.nextChanceAt : undefined,
  };
  // Saturated: the plans were made at the saturated price, and each call makes the loop look again.
  if (room > 0) {
    const spare = room - survey.landing;
    const pulled = pullDue(input, settings, survey.candidates, spare);
    const probes = probeUnknown(input, settings, survey.candidates, spare - pulled.length);
    plan.moves.push(...pulled, ...probes);
  }
  if (input.owed && input.owed.size > 0) plan.moves.push(...pullOwed(input, settings, plan.moves));
  return plan;
}

/**
 * A tenant owed calls by its fair share (`callsOwed`, fair-share.ts: beyond its calls due and its
 * tokens held in the window) has its likely-done polls (by the learned timing, the likeliest
 * first) pulled to now, saturated or not: a poll planned far out at the saturated price (its job's
 * slack is the key's, not its tenant's) would leave the tenant no call to ask with, and its share's
 * tokens would go to the others. A pulled poll then asks as a tenant behind does (it takes over a
 * leader's token at its share's pace). Polls not likely done are left: they would find their task
 * running.
 */
function pullOwed(input: FillInput, o: FillSettings, moved: readonly PlannedMove[]): PlannedMove[] {
  const { now, owed } = input;
  if (!owed) return [];
  const taken = new Set(moved.map((move) => move.jobId));
  const byTenant = new Map<string, { job: FillView; operation: string; done: number }[]>();
  for (const job of input.jobs) {
    if ((owed.get(job.tenant) ?? 0) < 1 || taken.has(job.id) || job.nextRunAt <= now + o.windowMs) continue;
    const workflow = input.workflows.get(job.workflow);
    if (!workflow || !waitsForPoll(workflow, job)) continue;
    const step = findStep(workflow, job.step);
    if (!step || step.kind === 'fetch' || step.kind === 'request' || step.operation === undefined) continue;
    const sketch = input.sketchOf(step.operation);
    if (!sketch || sketch.count <= 0) continue;
    const startedAt = job.pollStartedAt ?? now;
    const runningAt = job.lastPolledAt === undefined ? 0 : job.lastPolledAt - startedAt;
    const done = doneShare(sketch, now - startedAt, runningAt) ?? 0;
    if (done < likelyDoneShare) continue;
    byTenant.set(job.tenant, [...(byTenant.get(job.tenant) ?? []), { job, operation: step.operation, done }]);
  }
  const moves: PlannedMove[] = [];
  for (const [tenant, polls] of byTenant) {
    polls.sort((a, b) => b.done - a.done || a.job.nextRunAt - b.job.nextRunAt);
    for (const { job, operation } of polls.slice(0, owed.get(tenant) ?? 0))
      moves.push({ jobId: job.id, version: job.version, at: now, why: 'owed', operation });
  }
  return moves;
}

/** A poll whose task is at least this likely done (by the learned timing) advances its job. */
const likelyDoneShare = 0.5;

export interface FillInput {
  now: number;
  jobs: readonly FillView[];
  /** Jobs due within the window holding no reserved token; default: counted in `jobs`. */
  dueSoon?: number | undefined;
  workflows: WorkflowRegistry;
  budget: BudgetView;
  /** The learned sketch of an operation's task durations (undefined: none yet). */
  sketchOf: (operation: string) => DurationSketch | undefined;
  /** The calls over a job's minimum its polls may spend (poll-price.ts); default: `defaultPollAllowance`. */
  allowance?: PollAllowance | undefined;
  /** The key's unfinished work as last counted (`planOrder`); undefined: not counted. */
  work?: KeyWork | undefined;
  probedAt?: ReadonlyMap<string, number> | undefined;
  /** The key's call order (`planOrder`): with `longest-first`, ties go to jobs with more steps left. */
  order?: CallOrder | undefined;
  /**
   * Calls each tenant is owed by its fair share beyond those due and held (`callsOwed`, less its
   * calls due in the window): as many of its likely-done polls are pulled to now (`pullOwed`).
   */
  owed?: ReadonlyMap<string, number> | undefined;
  options?: FillOptions | undefined;
}

type FillSettings = typeof defaults;

/** What `surveyPolls` found among the waiting jobs. */
interface PollSurvey {
  /** Polls the plan now puts clearly earlier than scheduled, but not due within the window: moved there. */
  reaims: PlannedMove[];
  /** Re-aimed polls that land in the window (they take calls of its room). */
  landing: number;
  /** Polls the plan puts within the window (pulled while the room lasts), and polls of unknown operations. */
  candidates: Candidate[];
  /** The earliest time a poll left where it is becomes due a probe. */
  nextChanceAt: number;
}

/**
 * One pass over the jobs due after the window. Each waiting poll of a known operation is planned
 * (poll-plan.ts) at the price its key gives it now (poll-price.ts: the room in the budget, whether
 * the job's time decides when the key's work ends): a plan clearly earlier than the schedule moves
 * the poll there; one due within the window makes it a candidate to pull, which, if the room does
 * not reach it, is re-planned at the saturated price. Polls of operations nothing is known of are
 * candidates to probe.
 */
function surveyPolls(input: FillInput, o: FillSettings, roomy: boolean): PollSurvey {
  const { now, jobs, workflows } = input;
  const dueBy = now + o.windowMs;
  const survey: PollSurvey = {
    reaims: [],
    landing: 0,
    candidates: [],
    nextChanceAt: Number.POSITIVE_INFINITY,
  };
  for (const job of jobs) {
    if (job.nextRunAt <= dueBy) continue;
    const workflow = workflows.get(job.workflow);
    if (!workflow || !waitsForPoll(workflow, job)) continue;
    const step = findStep(workflow, job.step);
    if (!step || step.kind === 'fetch' || step.kind === 'request' || step.operation === undefined) continue;
    const startedAt = job.pollStartedAt ?? now;
    const index = workflow.steps.findIndex((candidate) => candidate.name === step.name);
    const sketch = input.sketchOf(step.operation);
    const candidate: Candidate = {
      job,
      operation: step.operation,
      aimAt: undefined,
      done: 0,
      stepsLeft: workflow.steps.length - 1 - index,
    };
    if (sketch === undefined || sketch.count <= 0) {
      const last = input.probedAt?.get(step.operation) ?? Number.NEGATIVE_INFINITY;
      const at = Math.max(probeDueAt(job, startedAt, o.probeEveryMs), last + o.probeEveryMs);
      if (at < job.nextRunAt - o.windowMs)
        survey.nextChanceAt = Math.min(survey.nextChanceAt, Math.max(at, now + 1));
      survey.candidates.push(candidate);
      continue;
    }
    const aimAt = plannedAt(input, workflow, step, job, roomy);
    if (aimAt === undefined) continue;
    if (roomy && aimAt <= dueBy) {
      const runningAt = job.lastPolledAt === undefined ? 0 : job.lastPolledAt - startedAt;
      survey.candidates.push({
        ...candidate,
        aimAt,
        done: doneShare(sketch, now - startedAt, runningAt) ?? 0,
      });
      continue;
    }
    const move = reaim(job, aimAt, step.operation, now, o);
    if (move) {
      survey.reaims.push(move);
      if (move.at <= dueBy) survey.landing++;
    }
  }
  return survey;
}

/** Where a waiting poll's plan puts it now (clock time, not before now), at the key's price. */
function plannedAt(
  input: FillInput,
  workflow: Workflow,
  step: Workflow['steps'][number],
  job: FillView,
  roomy: boolean,
): number | undefined {
  const sketch =
    step.kind === 'fetch' || step.operation === undefined ? undefined : input.sketchOf(step.operation);
  if (!sketch) return undefined;
  const startedAt = job.pollStartedAt ?? input.now;
  const runningAtMs = job.lastPolledAt === undefined ? 0 : job.lastPolledAt - startedAt;
  const price = pollPrice({
    workflow,
    step,
    sketch,
    meanOf: (operation) => {
      const other = input.sketchOf(operation);
      return other && other.count > 0 ? sketchMean(other) : undefined;
    },
    runningAtMs,
    ratePerSecond: input.budget.ratePerSecond,
    saturated: !roomy,
    waiting: -input.budget.tokens,
    work: input.work,
    now: input.now,
    allowance: input.allowance ?? defaultPollAllowance,
  });
  const plan = sketchPlan(sketch, price.target, price.extraPriceMs);
  const at = plan && plannedPollAt(plan, runningAtMs, input.now - startedAt);
  return at === undefined ? undefined : Math.max(input.now, startedAt + at);
}

/** A move of the poll to `aimAt` when that is clearly earlier than its schedule (the margin, or a quarter of its wait). */
function reaim(
  job: FillView,
  aimAt: number,
  operation: string,
  now: number,
  o: FillSettings,
): PlannedMove | undefined {
  const margin = Math.max(o.reaimMarginMs, (job.nextRunAt - now) / 4);
  if (aimAt + margin >= job.nextRunAt) return undefined;
  return { jobId: job.id, version: job.version, at: aimAt, why: 're-aim', operation };
}

/**
 * Up to `spare` polls the plan puts within the window, pulled to their planned time: the likeliest
 * ended first, then by steps left (fewer first, more first when the order is `longest-first`).
 * Those the room does not reach are re-planned at the saturated price.
 */
function pullDue(
  input: FillInput,
  o: FillSettings,
  candidates: readonly Candidate[],
  spare: number,
): PlannedMove[] {
  const fewerLeftFirst = input.order === 'longest-first' ? -1 : 1;
  const due = candidates
    .filter((candidate) => candidate.aimAt !== undefined)
    .sort(
      (a, b) =>
        b.done - a.done || fewerLeftFirst * (a.stepsLeft - b.stepsLeft) || a.job.nextRunAt - b.job.nextRunAt,
    );
  const moves: PlannedMove[] = [];
  for (const [i, candidate] of due.entries()) {
    const { job } = candidate;
    if (i < spare) {
      const at = candidate.aimAt ?? input.now;
      moves.push({
        jobId: job.id,
        version: job.version,
        at,
        why: 'pull-forward',
        operation: candidate.operation,
      });
      continue;
    }
    const workflow = input.workflows.get(job.workflow);
    const step = workflow && findStep(workflow, job.step);
    const aimAt = workflow && step ? plannedAt(input, workflow, step, job, false) : undefined;
    const move = aimAt === undefined ? undefined : reaim(job, aimAt, candidate.operation, input.now, o);
    if (move) moves.push(move);
  }
  return moves;
}

/**
 * Operations nothing is known of: up to `spare` probes, one per operation at a time, each of the
 * job waiting longest whose probe is due, and none for an operation probed within `probeEveryMs`.
 */
function probeUnknown(
  input: FillInput,
  o: FillSettings,
  candidates: readonly Candidate[],
  spare: number,
): PlannedMove[] {
  const { now } = input;
  const probes: PlannedMove[] = [];
  const probed = new Set<string>();
  const unknown = candidates
    .filter((candidate) => candidate.aimAt === undefined)
    .sort((a, b) => (a.job.pollStartedAt ?? now) - (b.job.pollStartedAt ?? now));
  for (const candidate of unknown) {
    if (probes.length >= spare) break;
    if (probed.has(candidate.operation)) continue;
    const last = input.probedAt?.get(candidate.operation);
    if (last !== undefined && now - last < o.probeEveryMs) continue;
    if (now < probeDueAt(candidate.job, candidate.job.pollStartedAt ?? now, o.probeEveryMs)) continue;
    probed.add(candidate.operation);
    probes.push({
      jobId: candidate.job.id,
      version: candidate.job.version,
      at: now,
      why: 'probe',
      operation: candidate.operation,
    });
  }
  return probes;
}

/** A key's order as the filler holds it: the last count's plan (`planned`) and the order in force. */
export interface KeyOrder extends OrderPlan {
  /** What the last count alone said; the order turns when two counts in a row say the same. */
  planned: CallOrder;
  /** Clock time since which `order` has held. */
  since: number;
  /** Clock time of the count. */
  countedAt: number;
}

export interface FillRound {
  pulled: number;
  probed: number;
  reaimed: number;
  /** New jobs sent for at once because their key's order turned to longest remaining work first. */
  admitted?: number | undefined;
  /** Polls pulled forward for tenants owed calls by their fair shares (`pullOwed`). */
  owed?: number | undefined;
  /** When a job left waiting could next be moved (see FillPlan). */
  nextChanceAt?: number | undefined;
}

/**
 * Runs `planFill` for every key with waiting jobs and applies the moves (one commit and one message
 * each). Keeps, in memory, when each operation was last probed, and each key's call order
 * (`planOrder`, from the store's `scanWork` every `workEveryMs`), which the runner reads through
 * `orderOf` (wired as `EngineDeps.callOrder`). Call it a few times a second.
 */
export class BudgetFiller {
  readonly #deps: EngineDeps;
  readonly #options: FillOptions;
  readonly #probedAt = new Map<string, number>();
  readonly #orders = new Map<string, KeyOrder>();
  /** Messages sent to admit new jobs, by `id@version` (each once). */
  readonly #admitted = new Set<string>();
  readonly #statsKeys = new Map<string, string>();
  /** Keys counted early once because they had waiting jobs and no count. */
  readonly #recounted = new Set<string>();
  #workCountedAt = Number.NEGATIVE_INFINITY;

  constructor(deps: EngineDeps, options: FillOptions = {}) {
    this.#deps = deps;
    this.#options = options;
  }

  /** The order calls of the key with this bucket (its fingerprint) wait in; undefined: the default. */
  orderOf(bucket: string): CallOrder | undefined {
    return this.#orders.get(bucket)?.order;
  }

  /** Each key's order, the last count's plan, and since when (clock time) the order has held. */
  orders(): ReadonlyMap<string, KeyOrder> {
    return this.#orders;
  }

  async fill(): Promise<FillRound> {
    const deps = this.#deps;
    const round: FillRound = { pulled: 0, probed: 0, reaimed: 0 };
    // Without learned timing there is nothing to aim at: the declared schedules stand.
    if (!deps.pollStats) return round;
    const now = deps.clock.now();
    const bucketOf = new Map<string, string | undefined>();
    const keyOf = async (tenant: string) => {
      if (!bucketOf.has(tenant)) {
        const key = await deps.keys.getKey(tenant);
        bucketOf.set(tenant, key === undefined ? undefined : keyFingerprint(key));
      }
      return bucketOf.get(tenant);
    };
    round.admitted = await this.#order(now, keyOf);
    const { jobs, dueByTenant, budgets, sketches: known } = await this.#scan(now, keyOf);
    if (jobs.length === 0) return round;
    // One budget per key: group by tenant, then by the key's fingerprint.
    const byBucket = new Map<string, { jobs: FillView[]; dueSoon: number | undefined }>();
    for (const job of jobs) {
      const bucket = await keyOf(job.tenant);
      if (bucket === undefined) continue;
      const entry = byBucket.get(bucket) ?? { jobs: [], dueSoon: dueByTenant ? 0 : undefined };
      entry.jobs.push(job);
      byBucket.set(bucket, entry);
    }
    if (dueByTenant) {
      for (const [tenant, count] of dueByTenant) {
        const entry = byBucket.get((await keyOf(tenant)) ?? '');
        if (entry) entry.dueSoon = (entry.dueSoon ?? 0) + count;
      }
    }
    // A key with waiting jobs and no count yet (its first jobs came after the last count) is counted
    // in the next round, once: its jobs' polls wait for what the probes learn only once it is (a key
    // the count leaves out, with no rate, is not counted again each round).
    for (const bucket of byBucket.keys()) {
      if (this.#orders.has(bucket)) this.#recounted.delete(bucket);
      if (this.#orders.has(bucket) || this.#recounted.has(bucket)) continue;
      this.#recounted.add(bucket);
      this.#workCountedAt = Number.NEGATIVE_INFINITY;
    }
    for (const [bucket, { jobs: keyJobs, dueSoon }] of byBucket) {
      const budget = budgets?.get(bucket) ??
        (await deps.rateLimiter.budget?.(bucket, now)) ?? { tokens: 0, ratePerSecond: 0 };
      const sketches = known ?? (await this.#sketches(keyJobs.map((job) => [job.workflow, job.step])));
      const { moves, nextChanceAt } = planFill({
        now,
        jobs: keyJobs,
        dueSoon,
        workflows: deps.workflows,
        budget,
        sketchOf: (operation) => sketches.get(this.#statsKey(operation)),
        allowance: deps.pollAllowance,
        work: this.#orders.get(bucket),
        probedAt: this.#probedAt,
        order: this.orderOf(bucket),
        owed: this.#owed(bucket, now, budget.ratePerSecond, dueByTenant),
        options: this.#options,
      });
      if (nextChanceAt !== undefined)
        round.nextChanceAt = Math.min(round.nextChanceAt ?? nextChanceAt, nextChanceAt);
      for (const move of moves) {
        // The plan was made on a view: the move reads the whole job, and goes ahead only if it is
        // still the version planned on (any other writer's change wins; the next round looks again).
        const job = await deps.store.get(move.jobId);
        const workflow = job && deps.workflows.get(job.workflow);
        if (!job || !workflow || job.version !== move.version) continue;
        const moved = advance(workflow, job, { type: 'reschedule', at: move.at }, now, deps.random);
        if (moved.unchanged || !(await deps.store.commit(moved.job, job.version))) continue;
        deps.onJobChange?.(moved.job);
        await deps.queue.send(
          { jobId: job.id, version: moved.job.version },
          Math.min(moved.delayMs ?? 0, deps.queue.maxDelayMs),
        );
        if (move.why === 'owed') round.owed = (round.owed ?? 0) + 1;
        else if (move.why === 'probe') {
          this.#probedAt.set(move.operation, now);
          round.probed++;
        } else if (move.why === 're-aim') round.reaimed++;
        else round.pulled++;
      }
    }
    return round;
  }

  /**
   * The calls each tenant of the key is owed by its fair share (`callsOwed`) beyond its calls due
   * within the window (`dueByTenant`); undefined without fair shares or with one tenant with work.
   */
  #owed(
    bucket: string,
    now: number,
    ratePerSecond: number,
    dueByTenant: ReadonlyMap<string, number> | undefined,
  ): Map<string, number> | undefined {
    const shares = this.#deps.fairShares;
    if (!shares) return undefined;
    const windowMs = this.#options.windowMs ?? defaults.windowMs;
    const owed = callsOwed(shares.stateOf(bucket), shares.weights, now, windowMs, ratePerSecond);
    for (const [tenant, calls] of owed) {
      const left = calls - (dueByTenant?.get(tenant) ?? 0);
      if (left >= 1) owed.set(tenant, left);
      else owed.delete(tenant);
    }
    return owed.size > 0 ? owed : undefined;
  }

  /**
   * Every `workEveryMs`: counts the unfinished work (the store's `scanWork`), plans each key's order,
   * and for a key whose order is longest remaining work first sends for its new jobs now (one
   * message each, once per job version): a new job sent back to wait behind the budget may have
   * been told to come back many seconds later. Returns how many were sent for.
   */
  async #order(now: number, keyOf: (tenant: string) => Promise<string | undefined>): Promise<number> {
    const deps = this.#deps;
    const o = { ...defaults, ...definedOnly(this.#options) };
    if (!deps.store.scanWork || (o.endgameSlack ?? 1) <= 0 || now < this.#workCountedAt + o.workEveryMs)
      return 0;
    this.#workCountedAt = now;
    // New jobs are sent for only by a key whose order is (or turns, two counts agreeing) longest
    // remaining work first: read them only then, not the oldest `limit` of a large backlog each count.
    const mayAdmit = [...this.#orders.values()].some(
      (key) => key.order === 'longest-first' || key.planned === 'longest-first',
    );
    let scan: WorkScan;
    try {
      scan = await deps.store.scanWork({ queuedLimit: mayAdmit ? o.limit : 0 });
    } catch (error) {
      deps.log?.warn('could not count the unfinished work; the call order stays as it was', {
        error: errorMessage(error),
      });
      return 0;
    }
    const byBucket = new Map<string, WorkGroup[]>();
    for (const group of scan.groups) {
      const bucket = await keyOf(group.tenant);
      if (bucket === undefined) continue;
      byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), group]);
    }
    for (const bucket of this.#orders.keys()) if (!byBucket.has(bucket)) this.#orders.delete(bucket);
    for (const [bucket, work] of byBucket) {
      const budget = await deps.rateLimiter.budget?.(bucket, now);
      if (!budget || !(budget.ratePerSecond > 0)) {
        this.#orders.delete(bucket);
        continue;
      }
      const means = await this.#meanTimes(work);
      const plan = planOrder({
        work,
        workflows: deps.workflows,
        ratePerSecond: budget.ratePerSecond,
        taskMs: (operation) => means.get(operation)?.mean,
        taskSd: (operation) => means.get(operation)?.sd,
        slack: o.endgameSlack,
      });
      // The order turns only when two counts in a row agree: a batch counted while it was being
      // submitted (its first job alone looks like the end of the work) must not start all at once.
      const before = this.#orders.get(bucket);
      const held = before?.order ?? 'finish-first';
      const turned = plan.order !== held && before?.planned === plan.order;
      const order = turned ? plan.order : held;
      this.#orders.set(bucket, {
        ...plan,
        countedAt: now,
        order,
        planned: plan.order,
        since: turned || before === undefined ? now : before.since,
      });
    }
    let admitted = 0;
    if (!mayAdmit) return admitted;
    const queuedNow = new Set(scan.queued.map((job) => `${job.id}@${job.version}`));
    for (const sent of this.#admitted) if (!queuedNow.has(sent)) this.#admitted.delete(sent);
    for (const job of scan.queued) {
      if (job.tokenAt !== undefined) continue;
      const bucket = await keyOf(job.tenant);
      if (bucket === undefined || this.orderOf(bucket) !== 'longest-first') continue;
      const sent = `${job.id}@${job.version}`;
      if (this.#admitted.has(sent)) continue;
      this.#admitted.add(sent);
      await deps.queue.send({ jobId: job.id, version: job.version }, Math.max(0, job.nextRunAt - now));
      admitted++;
    }
    return admitted;
  }

  /**
   * The learned mean task time (and its spread) of each polled operation of these groups'
   * workflows: a chain's expected time is the sum of its tasks' means, whatever the shape of their times (the median
   * fits only a symmetric upstream; on a heavy tail it is a third of the mean).
   */
  async #meanTimes(work: readonly WorkGroup[]): Promise<Map<string, { mean: number; sd: number }>> {
    const deps = this.#deps;
    const operations = new Set<string>();
    for (const group of work) {
      for (const step of deps.workflows.get(group.workflow)?.steps ?? []) {
        if (step.poll && step.kind !== 'fetch' && step.operation !== undefined)
          operations.add(step.operation);
      }
    }
    const means = new Map<string, { mean: number; sd: number }>();
    if (!deps.pollStats || operations.size === 0) return means;
    try {
      const keys = [...operations].map((operation) => this.#statsKey(operation));
      const sketches = await deps.pollStats.load(keys);
      for (const operation of operations) {
        const sketch = sketches.get(this.#statsKey(operation));
        const mean = sketch && sketch.count > 0 ? sketchMean(sketch) : undefined;
        if (sketch && mean !== undefined) means.set(operation, { mean, sd: sketchSd(sketch) ?? 0 });
      }
    } catch {
      // Without the learned times the declared first delays estimate the chains.
    }
    return means;
  }

  /**
   * The jobs to plan on. With the store's `countForFill` (SQLite): first the due jobs counted per
   * tenant and the WAITING jobs counted per step, then each key's budget; when no key with waiting
   * jobs has room, nothing can be pulled or probed, and only the polls a re-aim can move are read
   * (`FillScanQuery.later`: scheduled later after their task's start than the step's learned aim
   * from the start, plus the margin; the aim conditioned on a later poll is never earlier), so a
   * round over a saturated backlog reads what can move, not the backlog. Otherwise every WAITING
   * job after the window (slim views, up to `limit`). Without `countForFill`: `scanForFill` alone,
   * or `listDue` over the horizon.
   */
  async #scan(
    now: number,
    keyOf: (tenant: string) => Promise<string | undefined>,
  ): Promise<{
    jobs: FillView[];
    dueByTenant?: Map<string, number> | undefined;
    budgets?: Map<string, BudgetView> | undefined;
    sketches?: Map<string, DurationSketch> | undefined;
  }> {
    const deps = this.#deps;
    const store = deps.store;
    const o = { ...defaults, ...definedOnly(this.#options) };
    const window = { dueBy: now + o.windowMs, until: now + o.horizonMs, limit: o.limit };
    if (store.scanForFill && store.countForFill) {
      const counts = await store.countForFill({ dueBy: window.dueBy, countUpTo: dueCountCap });
      if (counts.waiting.length === 0) return { jobs: [] };
      const dueByBucket = new Map<string, number>();
      for (const [tenant, count] of counts.dueByTenant) {
        const bucket = await keyOf(tenant);
        if (bucket !== undefined) dueByBucket.set(bucket, (dueByBucket.get(bucket) ?? 0) + count);
      }
      const budgets = new Map<string, BudgetView>();
      let room = false;
      for (const group of counts.waiting) {
        const bucket = await keyOf(group.tenant);
        if (bucket === undefined || budgets.has(bucket)) continue;
        const budget = (await deps.rateLimiter.budget?.(bucket, now)) ?? { tokens: 0, ratePerSecond: 0 };
        budgets.set(bucket, budget);
        if (spareCalls(budget, dueByBucket.get(bucket) ?? 0, o.windowMs) > 0) room = true;
      }
      if (room) {
        const scan = await store.scanForFill({ ...window, countUpTo: 0 });
        return { jobs: scan.waiting, dueByTenant: counts.dueByTenant, budgets };
      }
      const sketches = await this.#sketches(counts.waiting.map((group) => [group.workflow, group.step]));
      const allowance = deps.pollAllowance ?? defaultPollAllowance;
      const later: { workflow: string; step: string; laterThanMs: number }[] = [];
      const seen = new Set<string>();
      for (const group of counts.waiting) {
        const operation = polledOperation(deps.workflows, group.workflow, group.step);
        const sketch = operation === undefined ? undefined : sketches.get(this.#statsKey(operation));
        const named = `${group.workflow}\u0000${group.step}`;
        const workflow = deps.workflows.get(group.workflow);
        if (!sketch || sketch.count <= 0 || !workflow || seen.has(named)) continue;
        seen.add(named);
        // The earliest any job of this step may be planned from its task's start at a saturated
        // price (the critical allowance, one call's interval added): a plan from a later poll is later.
        const rate = budgets.get((await keyOf(group.tenant)) ?? '')?.ratePerSecond ?? 0;
        const plan = sketchPlan(
          sketch,
          { pollsPerTask: pollsPerTask(workflow, allowance.critical) },
          rate > 0 ? 1000 / rate : 0,
        );
        const aim = plan && plannedPollAt(plan, 0, 0);
        // 1 ms below the bound: the rounding of the conditioned aims must not hide a job.
        if (aim !== undefined)
          later.push({ workflow: group.workflow, step: group.step, laterThanMs: aim + o.reaimMarginMs - 1 });
      }
      if (later.length === 0) return { jobs: [] };
      const scan = await store.scanForFill({ ...window, countUpTo: 0, later });
      return { jobs: scan.waiting, dueByTenant: counts.dueByTenant, budgets, sketches };
    }
    if (store.scanForFill) {
      const scan = await store.scanForFill({ ...window, countUpTo: dueCountCap });
      return { jobs: scan.waiting, dueByTenant: scan.dueByTenant };
    }
    return { jobs: await store.listDue(window.until, o.limit) };
  }

  /** The learned sketches of the operations polled at these workflow steps. */
  async #sketches(steps: Iterable<readonly [string, string]>): Promise<Map<string, DurationSketch>> {
    const stats = this.#deps.pollStats;
    if (!stats) return new Map();
    const keys = new Set<string>();
    for (const [workflow, step] of steps) {
      const operation = polledOperation(this.#deps.workflows, workflow, step);
      if (operation !== undefined) keys.add(this.#statsKey(operation));
    }
    if (keys.size === 0) return new Map();
    try {
      return await stats.load([...keys]);
    } catch (error) {
      this.#deps.log?.warn('could not read the learned poll timing; no polls moved this round', {
        error: errorMessage(error),
      });
      return new Map();
    }
  }

  /** `pollStatsKey` of an operation (a hash of the scope: computed once per operation). */
  #statsKey(operation: string): string {
    let key = this.#statsKeys.get(operation);
    if (key === undefined) {
      key = pollStatsKey(this.#deps.pollStatsScope, operation);
      this.#statsKeys.set(operation, key);
    }
    return key;
  }
}

/** The operation a workflow step polls (undefined: the step does not poll, or is not known). */
function polledOperation(
  workflows: WorkflowRegistry,
  workflow: string,
  stepName: string,
): string | undefined {
  const step = workflows.get(workflow)?.steps.find((s) => s.name === stepName);
  return step?.poll && step.kind !== 'fetch' && step.kind !== 'request' ? step.operation : undefined;
}

/** The calls the budget can make within the window beyond those due in it (as planFill counts them). */
function spareCalls(budget: BudgetView, dueSoon: number, windowMs: number): number {
  return Math.floor(budget.tokens + (budget.ratePerSecond * windowMs) / 1000 - dueSoon);
}

/**
 * When a job polling an operation nothing is known of may be probed next: `probeEveryMs` after it
 * was last looked at, or half the time its task had then been running if that is longer, so probes
 * of a long task thin out geometrically (a 5-minute task about 13 probes, not 300).
 */
function probeDueAt(job: FillView, startedAt: number, probeEveryMs: number): number {
  const lookedAt = job.lastPolledAt ?? startedAt;
  return lookedAt + Math.max(probeEveryMs, (lookedAt - startedAt) / 2);
}

/**
 * Due jobs counted per round at most: the budget's room is a few calls (its tokens and a window's
 * refill), so past a few hundred the count says only "full".
 */
const dueCountCap = 200;

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
