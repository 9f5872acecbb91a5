/**
 * Releasing parked jobs (aws): jobs whose call found no token within its horizon while the key's
 * budget was saturated are parked (committed without a message, in their key's `WAIT#` partition
 * of the `due` index; runner.ts). They cost nothing while they wait. A release round, run by the
 * step worker after each step of a job of the same key, reads the parked jobs class by class (calls
 * that advance a job first, then speculative polls, then new jobs' first calls), of each class each
 * tenant's soonest (as many as a round releases: a tenant the others outnumber is read too), in the
 * order their tenants are owed tokens where the limiter keeps shares, else in due order,
 * reserves each one's token within its horizon, and commits the release at the version it
 * read (`admitted`: one commit) and sends the job's one message for its token. A job whose token
 * lies beyond its horizon stays parked: the line is full, so the key's commits keep coming and
 * each runs a round. Any number of workers may release at once: a release lost to another writer
 * leaves its token unused (budget, never a call paid twice).
 */
import { advance, countMessage } from '../advance';
import type { EngineDeps } from '../deps';
import { defaultMessageBudget, isTerminal, type Job } from '../job-record';
import type { Workflow } from '../workflow';
import { shareClaim } from './acquire-token';
import type { ParkedJob, ParkedJobs } from './parked-jobs';

export interface ReleaseOptions {
  /** Parked jobs due within this long are looked at (default 30 s: twice the reservation horizon). */
  lookaheadMs?: number | undefined;
  /**
   * Parked jobs listed per round (default 12): classes are read until this many are found; a class
   * is read whole, each tenant's `maxReleases` soonest (the most one tenant can be given a round).
   */
  limit?: number | undefined;
  /** Jobs released per round at most (default 4). */
  maxReleases?: number | undefined;
}

export interface ReleaseRound {
  looked: number;
  released: number;
  /** Releases lost to another writer (their token is left unused). */
  lost: number;
}

/** One release round for the parked jobs of `bucket` (see the module's comment). */
export async function releaseParked(
  deps: EngineDeps,
  parked: Pick<ParkedJobs, 'listParked'>,
  bucket: string,
  options: ReleaseOptions = {},
): Promise<ReleaseRound> {
  const round: ReleaseRound = { looked: 0, released: 0, lost: 0 };
  const reserveAhead = deps.rateLimiter.reserveAhead?.bind(deps.rateLimiter);
  if (!reserveAhead) return round;
  const now = deps.clock.now();
  const maxReleases = options.maxReleases ?? 4;
  const candidates = await parked.listParked(
    bucket,
    now + (options.lookaheadMs ?? 30_000),
    options.limit ?? 12,
    { perTenant: maxReleases, startAt: deps.random() },
  );
  // Where the limiter keeps the key's shares of two tenants or more, each class goes in the order
  // its tenants are owed tokens (weighted fair queueing over the key's ledger): in due order (by
  // id, for jobs parked at one time) the tokens would follow how many jobs each tenant parked.
  const owed =
    deps.rateLimiter.keepsShares && candidates.length > 1
      ? await deps.rateLimiter.shareOrder?.(bucket, now)
      : undefined;
  const ordered = owed ? await inShareOrder(deps, candidates, owed) : candidates;
  // Once a job due now finds no token within its horizon, the rest of its class (due later, same
  // horizon or less) would not either.
  const fullClasses = new Set<string>();
  for (const candidate of ordered) {
    if (round.released >= maxReleases) break;
    if (fullClasses.has(candidate.class)) continue;
    round.looked++;
    const job = await deps.store.get(candidate.id);
    if (!job?.parked || job.parked.bucket !== bucket || isTerminal(job.status)) continue;
    const workflow = deps.workflows.get(job.workflow);
    if (!workflow) continue;
    if (job.deadlineAt <= now) {
      // Past its deadline while parked: sent now, without a token, so the runner fails it.
      if (await sendExpired(deps, workflow, job, now)) round.released++;
      else round.lost++;
      continue;
    }
    const at = Math.max(now, job.nextRunAt);
    const tokenAt = await reserveAhead(bucket, now, {
      at,
      withinMs: job.parked.withinMs,
      share: shareClaim(job),
    });
    if (tokenAt === undefined) {
      if (at <= now) fullClasses.add(candidate.class);
      continue;
    }
    // The release's message counts against the job's budget (runaway guard: past it, the job fails).
    const admitted = countMessage(
      advance(workflow, job, { type: 'admitted', at: tokenAt }, now, deps.random),
      deps.messageBudget ?? defaultMessageBudget,
      now,
    );
    if (!(await deps.store.commit(admitted.job, job.version))) {
      round.lost++;
      continue;
    }
    if (isTerminal(admitted.job.status)) continue;
    // Only its place in line changed (token and due time): no history event, one write less.
    await deps.queue.send(
      { jobId: job.id, version: admitted.job.version },
      Math.min(admitted.delayMs ?? 0, deps.queue.maxDelayMs),
    );
    round.released++;
  }
  return round;
}

/** A parked job past its deadline: unparked at the version read and sent now (the runner fails it). */
async function sendExpired(deps: EngineDeps, workflow: Workflow, job: Job, now: number): Promise<boolean> {
  const unparked = advance(workflow, job, { type: 'unpark' }, now, deps.random);
  if (!(await deps.store.commit(unparked.job, job.version))) return false;
  await deps.queue.send({ jobId: job.id, version: unparked.job.version }, 0);
  return true;
}

/**
 * The candidates class by class, each class in the order `owed` gives its jobs' tenants (the
 * limiter's `shareOrder`). A row's key carries its tenant; a row written before it did is read for
 * its tenant here (and again by the loop when its turn comes), and one whose job is gone goes at its
 * class's end (the loop skips it).
 */
async function inShareOrder(
  deps: EngineDeps,
  candidates: readonly ParkedJob[],
  owed: (tenants: readonly string[]) => number[],
): Promise<ParkedJob[]> {
  const tenantOf = await Promise.all(
    candidates.map(async (candidate) => candidate.tenant ?? (await deps.store.get(candidate.id))?.tenant),
  );
  const ordered: ParkedJob[] = [];
  for (const parkedClass of new Set(candidates.map((candidate) => candidate.class))) {
    const known: (ParkedJob & { tenant: string })[] = [];
    const gone: ParkedJob[] = [];
    for (const [index, candidate] of candidates.entries()) {
      if (candidate.class !== parkedClass) continue;
      const tenant = tenantOf[index];
      if (tenant === undefined) gone.push(candidate);
      else known.push({ ...candidate, tenant });
    }
    const tenants = known.map((candidate) => candidate.tenant);
    const order = new Set(tenants).size > 1 ? owed(tenants) : [];
    // Any candidate the order leaves out keeps its due place after those it names.
    for (const index of new Set([...order.filter((index) => known[index] !== undefined), ...known.keys()]))
      ordered.push(known[index] as ParkedJob);
    ordered.push(...gone);
  }
  return ordered;
}
