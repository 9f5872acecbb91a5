/**
 * Filling the key's rate budget (issue 10). The runner aims each poll at the learned timing when it
 * schedules it; the scheduler looks again at what waits, a few times a second, and moves it:
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
 * `planFill` is pure (it decides); `BudgetFiller` reads the store, commits each move through
 * advance() ('reschedule') and sends the job's message, whose earlier one then finds a newer
 * version and is dropped.
 */
import { advance, findStep, waitsForPoll } from './advance';
import type { EngineDeps } from './deps';
import { pollStatsKey } from './poll-stats';
import { conditionalQuantile, type DurationSketch, defaultPollAim, doneShare } from './poll-timing';
import type { FillView } from './ports';
import { keyFingerprint } from './runner';
import type { WorkflowRegistry } from './workflow';

export interface FillOptions {
  /** How far ahead waiting jobs are looked at. Default: 10 minutes. */
  horizonMs?: number | undefined;
  /** Calls due within this window count against the budget's room now. Default: 1 s. */
  windowMs?: number | undefined;
  /** Jobs looked at per round. Default: 1,000. */
  limit?: number | undefined;
  /** A poll is pulled forward only when at least this share of its operation's tasks are done by now. Default: 0.5. */
  minDoneShare?: number | undefined;
  /**
   * An operation nothing is known of is probed at most once in this long, and a job only after
   * waiting this long since it was last looked at (or half its task's running time then, if more).
   * Default: 1 s.
   */
  probeEveryMs?: number | undefined;
  /** A scheduled poll is re-aimed only when the estimate puts it this much earlier (and a quarter of its wait). Default: 1 s. */
  reaimMarginMs?: number | undefined;
}

const defaults = {
  horizonMs: 10 * 60_000,
  windowMs: 1_000,
  limit: 1_000,
  minDoneShare: 0.5,
  probeEveryMs: 1_000,
  reaimMarginMs: 1_000,
};

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
  why: 'pull-forward' | 'probe' | 're-aim';
  /** The operation the job polls. */
  operation: string;
}

interface Candidate {
  job: FillView;
  operation: string;
  /** Share of its task's kind done by now, given it was running at its last poll; undefined: nothing learned. */
  done: number | undefined;
  stepsLeft: number;
}

/**
 * What to move now, for the jobs of one key due within the horizon (`jobs`, as `listDue` returns
 * them, or only those due after the window with `dueSoon`). Re-aims first, then pulls in order while
 * the budget has spare calls, then at most one probe per operation nothing is known of (`probedAt`:
 * when each operation was last probed).
 */
export function planFill(input: {
  now: number;
  jobs: readonly FillView[];
  /** Jobs due within the window holding no reserved token; default: counted in `jobs`. */
  dueSoon?: number | undefined;
  workflows: WorkflowRegistry;
  budget: BudgetView;
  /** The learned sketch of an operation's task durations (undefined: none yet). */
  sketchOf: (operation: string) => DurationSketch | undefined;
  /** Re-aims move a poll scheduled later than this quantile of its task's time (the saturated aim). */
  reaimQuantile: number;
  probedAt?: ReadonlyMap<string, number> | undefined;
  options?: FillOptions | undefined;
}): FillPlan {
  const { now, jobs, workflows, budget, sketchOf, reaimQuantile } = input;
  const o = { ...defaults, ...definedOnly(input.options ?? {}) };
  const dueBy = now + o.windowMs;
  // Jobs holding a reserved token have taken it from the bucket already (its debt).
  let demand =
    input.dueSoon ?? jobs.filter((job) => job.nextRunAt <= dueBy && job.tokenAt === undefined).length;
  const moves: PlannedMove[] = [];
  const candidates: Candidate[] = [];
  let nextChanceAt = Number.POSITIVE_INFINITY;
  const chance = (at: number, job: FillView) => {
    if (at < job.nextRunAt - o.windowMs) nextChanceAt = Math.min(nextChanceAt, Math.max(at, now + 1));
  };
  for (const job of jobs) {
    if (job.nextRunAt <= dueBy) continue;
    const workflow = workflows.get(job.workflow);
    if (!workflow || !waitsForPoll(workflow, job)) continue;
    const step = findStep(workflow, job.step);
    if (!step || step.kind === 'fetch' || step.kind === 'request' || step.operation === undefined) continue;
    const startedAt = job.pollStartedAt ?? now;
    const elapsed = now - startedAt;
    const runningAt = job.lastPolledAt === undefined ? 0 : job.lastPolledAt - startedAt;
    const sketch = sketchOf(step.operation);
    const known = sketch !== undefined && sketch.count > 0;
    if (known) {
      // Where the estimate aims this poll now (from the task's start): earlier than scheduled by a
      // clear margin, move it there (at once if that time has passed).
      const aim = conditionalQuantile(sketch, reaimQuantile, runningAt);
      if (aim !== undefined) {
        const aimAt = Math.max(now, startedAt + aim);
        const margin = Math.max(o.reaimMarginMs, (job.nextRunAt - now) / 4);
        if (aimAt + margin < job.nextRunAt) {
          moves.push({
            jobId: job.id,
            version: job.version,
            at: aimAt,
            why: 're-aim',
            operation: step.operation,
          });
          if (aimAt <= dueBy) demand++;
          continue;
        }
      }
    }
    const index = workflow.steps.findIndex((candidate) => candidate.name === step.name);
    if (known) {
      const likelyFrom = conditionalQuantile(sketch, o.minDoneShare, runningAt);
      if (likelyFrom !== undefined) chance(startedAt + likelyFrom, job);
    } else {
      const last = input.probedAt?.get(step.operation) ?? Number.NEGATIVE_INFINITY;
      chance(Math.max(probeDueAt(job, startedAt, o.probeEveryMs), last + o.probeEveryMs), job);
    }
    candidates.push({
      job,
      operation: step.operation,
      done: known ? doneShare(sketch, elapsed, runningAt) : undefined,
      stepsLeft: workflow.steps.length - 1 - index,
    });
  }

  const plan: FillPlan = { moves, nextChanceAt: Number.isFinite(nextChanceAt) ? nextChanceAt : undefined };
  let spare = Math.floor(budget.tokens + (budget.ratePerSecond * o.windowMs) / 1000 - demand);
  // Saturated: the budget has room again only after calls are made, and each makes the loop look.
  if (spare <= 0) return plan;
  const likely = candidates
    .filter((candidate) => candidate.done !== undefined && candidate.done >= o.minDoneShare)
    .sort(
      (a, b) =>
        (b.done ?? 0) - (a.done ?? 0) || a.stepsLeft - b.stepsLeft || a.job.nextRunAt - b.job.nextRunAt,
    );
  for (const candidate of likely) {
    if (spare <= 0) return plan;
    moves.push({
      jobId: candidate.job.id,
      version: candidate.job.version,
      at: now,
      why: 'pull-forward',
      operation: candidate.operation,
    });
    spare--;
  }
  // Operations nothing is known of: probe the job waiting longest, one per operation at a time.
  const probed = new Set<string>();
  const unknown = candidates
    .filter((candidate) => candidate.done === undefined)
    .sort((a, b) => (a.job.pollStartedAt ?? now) - (b.job.pollStartedAt ?? now));
  for (const candidate of unknown) {
    if (spare <= 0) break;
    if (probed.has(candidate.operation)) continue;
    const last = input.probedAt?.get(candidate.operation);
    if (last !== undefined && now - last < o.probeEveryMs) continue;
    if (now < probeDueAt(candidate.job, candidate.job.pollStartedAt ?? now, o.probeEveryMs)) continue;
    probed.add(candidate.operation);
    moves.push({
      jobId: candidate.job.id,
      version: candidate.job.version,
      at: now,
      why: 'probe',
      operation: candidate.operation,
    });
    spare--;
  }
  return plan;
}

export interface FillRound {
  pulled: number;
  probed: number;
  reaimed: number;
  /** When a job left waiting could next be moved (see FillPlan). */
  nextChanceAt?: number | undefined;
}

/**
 * Runs `planFill` for every key with waiting jobs and applies the moves (one commit and one message
 * each). Keeps, in memory, when each operation was last probed. Call it a few times a second.
 */
export class BudgetFiller {
  readonly #deps: EngineDeps;
  readonly #options: FillOptions;
  readonly #probedAt = new Map<string, number>();

  constructor(deps: EngineDeps, options: FillOptions = {}) {
    this.#deps = deps;
    this.#options = options;
  }

  async fill(): Promise<FillRound> {
    const deps = this.#deps;
    const round: FillRound = { pulled: 0, probed: 0, reaimed: 0 };
    // Without learned timing there is nothing to aim at: the declared schedules stand.
    if (!deps.pollStats) return round;
    const now = deps.clock.now();
    const { jobs, dueByTenant } = await this.#scan(now);
    if (jobs.length === 0) return round;
    // One budget per key: group by tenant, then by the key's fingerprint.
    const byBucket = new Map<string, { jobs: FillView[]; dueSoon: number | undefined }>();
    const bucketOf = new Map<string, string | undefined>();
    const keyOf = async (tenant: string) => {
      if (!bucketOf.has(tenant)) {
        const key = await deps.keys.getKey(tenant);
        bucketOf.set(tenant, key === undefined ? undefined : keyFingerprint(key));
      }
      return bucketOf.get(tenant);
    };
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
    for (const [bucket, { jobs: keyJobs, dueSoon }] of byBucket) {
      const budget = (await deps.rateLimiter.budget?.(bucket, now)) ?? { tokens: 0, ratePerSecond: 0 };
      const sketches = await this.#sketches(keyJobs);
      const { moves, nextChanceAt } = planFill({
        now,
        jobs: keyJobs,
        dueSoon,
        workflows: deps.workflows,
        budget,
        sketchOf: (operation) => sketches.get(pollStatsKey(deps.pollStatsScope, operation)),
        reaimQuantile: (deps.pollAim ?? defaultPollAim).saturated,
        probedAt: this.#probedAt,
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
        if (move.why === 'probe') {
          this.#probedAt.set(move.operation, now);
          round.probed++;
        } else if (move.why === 're-aim') round.reaimed++;
        else round.pulled++;
      }
    }
    return round;
  }

  /**
   * The jobs to plan on: with the store's `scanForFill`, only the waiting ones after the window (slim
   * views) and per tenant a count of those due within it; otherwise `listDue` over the horizon.
   */
  async #scan(now: number): Promise<{ jobs: FillView[]; dueByTenant?: Map<string, number> | undefined }> {
    const store = this.#deps.store;
    const horizonMs = this.#options.horizonMs ?? defaults.horizonMs;
    const limit = this.#options.limit ?? defaults.limit;
    if (store.scanForFill) {
      const windowMs = this.#options.windowMs ?? defaults.windowMs;
      const scan = await store.scanForFill({
        dueBy: now + windowMs,
        until: now + horizonMs,
        limit,
        countUpTo: dueCountCap,
      });
      return { jobs: scan.waiting, dueByTenant: scan.dueByTenant };
    }
    return { jobs: await store.listDue(now + horizonMs, limit) };
  }

  async #sketches(jobs: readonly FillView[]): Promise<Map<string, DurationSketch>> {
    const stats = this.#deps.pollStats;
    if (!stats) return new Map();
    const keys = new Set<string>();
    for (const job of jobs) {
      const step = this.#deps.workflows.get(job.workflow)?.steps.find((s) => s.name === job.step);
      if (step?.poll && step.kind !== 'fetch' && step.kind !== 'request') {
        keys.add(pollStatsKey(this.#deps.pollStatsScope, step.operation));
      }
    }
    if (keys.size === 0) return new Map();
    try {
      return await stats.load([...keys]);
    } catch (error) {
      this.#deps.log?.warn('could not read the learned poll timing; no polls moved this round', {
        error: error instanceof Error ? error.message : String(error),
      });
      return new Map();
    }
  }
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
