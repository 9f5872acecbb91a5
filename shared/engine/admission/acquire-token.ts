/**
 * Taking the token of a step's call from its key's rate budget (the step runner's third stage).
 * The outcome says what became of the job when no token is free now: it waits for a reserved
 * token, is parked, or is sent back with a spread. No job record changes here except through
 * advance().
 */

import { errorMessage } from '../../errors/error-message';
import { advance, type EngineEvent } from '../advance';
import type { EngineDeps } from '../deps';
import type { Job } from '../job-record';
import type { RateDecision, ShareClaim, WorkMessage } from '../ports';
import type { StepReport } from '../runner';
import type { Step, Workflow } from '../workflow';
import type { CallOrder } from './budget-filler';
import type { Standing } from './fair-share';
import {
  defaultReserveHorizonMs,
  likelyDone,
  minReserveHorizonMs,
  reserveHorizonMs,
  waitPriority,
} from './priority';

/** What became of a step's call at the key's rate budget. */
export type TokenOutcome =
  /** The call may go now: a token taken now, one reserved earlier and due, or none needed (a download). */
  | { type: 'granted' }
  /** Its token is reserved for later and one message that holds it waits for then (no commit). */
  | { type: 'waiting-message'; report: StepReport }
  /** Its token is reserved for later: the wait is committed and its one message sent. */
  | { type: 'waiting-committed'; report: StepReport }
  /** The key's line is full: committed as parked, with no message; a releaser sends it (release.ts). */
  | { type: 'parked'; report: StepReport }
  /** No token within its horizon: sent back with a spread return (its token booked where messages hold one). */
  | { type: 'spread'; report: StepReport }
  /** Another writer changed the job meanwhile. */
  | { type: 'conflict'; report: StepReport };

/** The limiter's answer when no token is free now. */
type Refused = Extract<RateDecision, { granted: false }>;

/** Messages a little early (clock skew, queue delay caps) are fine; earlier than this is rescheduled. */
export const earlyToleranceMs = 1_000;

/**
 * A wait of `delayMs` from `now`, ending no later than the job's deadline: a job whose token comes
 * later is looked at when its time is up, and the runner fails it then.
 */
export function untilDeadline(job: Job, now: number, delayMs: number): number {
  return Math.max(0, Math.min(delayMs, job.deadlineAt - now));
}

/**
 * Whether a job may be parked (committed without a message): only when its deadline is farther
 * than the queue's longest delay. A job nearer its deadline waits with a message instead, which
 * comes back at the deadline at the latest.
 */
export function mayPark(deps: Pick<EngineDeps, 'queue'>, job: Job, now: number): boolean {
  return job.deadlineAt - now > deps.queue.maxDelayMs;
}

/**
 * A job held back by the rate limit for longer than this gets its `nextRunAt` moved forward (one
 * write), staying under the sweeper's default 30 s grace so it is never mistaken for stranded.
 */
const backlogRefreshMs = 20_000;

export interface TokenRequest {
  workflow: Workflow;
  job: Job;
  step: Step;
  message: WorkMessage;
  /** The key's bucket (`keyFingerprint`). */
  bucket: string;
  now: number;
}

const conflict: TokenOutcome = { type: 'conflict', report: { outcome: 'conflict' } };

/**
 * What taking a token needs of the engine's dependencies: the key's limiter, the job store and
 * queue, and the tuning of admission. No upstream client: the api books a new job's first token
 * with it (first-message.ts) without one.
 */
export type AdmissionDeps = Pick<
  EngineDeps,
  | 'rateLimiter'
  | 'store'
  | 'queue'
  | 'random'
  | 'log'
  | 'fairShares'
  | 'callOrder'
  | 'reserveHorizonMs'
  | 'admission'
  | 'pollStats'
  | 'pollStatsScope'
>;

/**
 * The token of the job's next call: granted, or what the job does instead (see `TokenOutcome`).
 * A token reserved for this job earlier (in its record, or held by this message at the job's
 * version) is spent now, not taken again.
 */
export async function acquireToken(deps: AdmissionDeps, request: TokenRequest): Promise<TokenOutcome> {
  const { workflow, job, step, bucket, now } = request;
  if (step.kind === 'fetch') return { type: 'granted' };
  const heldAt = await heldToken(deps, request);
  if (heldAt !== undefined) {
    // Spent one token interval after the key's last call, at the earliest (`pace`).
    const goesAt = (await deps.rateLimiter.pace?.(bucket, heldAt, now)) ?? now;
    if (goesAt <= now) return { type: 'granted' };
    return waitForReserved(deps, request, { granted: false, retryAtMs: goesAt, reserved: true });
  }
  // A `high` job's call goes ahead of the key's line: it takes over the next token reserved ahead
  // (priority-lane.ts), whose holder takes a new one when it comes.
  const claim = shareClaim(job);
  const cutInAt =
    job.priority === 'high'
      ? await deps.rateLimiter.cutIn?.(bucket, now, job.id, { share: claim })
      : undefined;
  if (cutInAt !== undefined) {
    // Its holder is given back its charge (it takes, and is charged, a new one), as on aws.
    if (deps.fairShares) (await import('./share-cut')).chargeCut(deps.fairShares, bucket, job, now, cutInAt);
    return waitForReserved(deps, request, { granted: false, retryAtMs: cutInAt, reserved: true });
  }
  // How far ahead this call may take its place in line: calls that advance a job farther than
  // speculative polls and new jobs' first calls, jobs nearer the end farthest. A tenant or batch
  // ahead of its fair share stands back as a new job's first call does (fair-share.ts).
  const order = deps.callOrder?.(bucket);
  const priority = waitPriority(workflow, job, step, await likelyDone(deps, step, job, now), order);
  const asked = job.priority === 'high' ? 'even' : (deps.fairShares?.asks(bucket, job, now) ?? 'even');
  // A call whose tenant or batch is behind a leader's takes over the leader's token reserved
  // ahead, at its share's pace (fair-share.ts `cutPlan`), as the aws bucket item's ledger does in
  // `take`: the lead the others reserved before it asked is repaid at once, not over the next
  // minute. It then does not step up: reserving the line's next 15 s would put all of its tokens
  // first and the leaders' after them. (Loaded on first use: on aws the limiter does it in `take`.)
  if (deps.fairShares && deps.rateLimiter.shareCutIn) {
    const { cutPlan, chargeCut } = await import('./share-cut');
    const plan = cutPlan(deps.fairShares, bucket, job, now);
    const cutAt = plan ? await deps.rateLimiter.shareCutIn(bucket, now, job.id, plan) : undefined;
    if (cutAt !== undefined) {
      chargeCut(deps.fairShares, bucket, job, now, cutAt);
      return waitForReserved(deps, request, { granted: false, retryAtMs: cutAt, reserved: true });
    }
  }
  const standing = asked === 'behind' && deps.rateLimiter.shareCutIn ? 'even' : asked;
  const ownMs = reserveHorizonMs(job, deps.reserveHorizonMs, priority, order);
  const fullMs = deps.reserveHorizonMs ?? defaultReserveHorizonMs;
  // A limiter that keeps the key's shares (aws: the bucket item) reads where the job's tenant and
  // batch stand, sets the horizon, and charges the token, all in the write that takes it.
  const horizonFor =
    job.priority === 'high' ? undefined : (where: Standing) => shareHorizonMs(where, ownMs, fullMs);
  const token = await deps.rateLimiter.take(bucket, now, {
    reserveWithinMs: shareHorizonMs(standing, ownMs, fullMs),
    share: { ...claim, horizonFor },
  });
  const horizonMs = token.granted ? ownMs : (token.withinMs ?? shareHorizonMs(standing, ownMs, fullMs));
  if (token.granted) deps.fairShares?.charge(bucket, job, now);
  else if (token.reserved) deps.fairShares?.charge(bucket, job, now, token.retryAtMs);
  if (token.granted) return { type: 'granted' };
  if (token.reserved) return waitForReserved(deps, request, token);
  // A new job's first look (the api's message, sent without the limiter) that finds the line
  // full is sent back once with the spread (a message, no write): parked, it would cost a park and
  // a release commit, and a line full now has mostly room by the time it returns. Returned and
  // still without a token (at least its horizon later), it is parked.
  const firstLook = job.status === 'QUEUED' && now - job.nextRunAt < minReserveHorizonMs;
  if (deps.admission && !firstLook && mayPark(deps, job, now)) {
    // No token within its horizon: the key's line is full. Parked, the job costs nothing while
    // it waits; a releaser reserves its token in due order and sends its one message.
    const parked = advance(workflow, job, { type: 'park', bucket, withinMs: horizonMs }, now, deps.random);
    // Only the job's place in its key's line changed: no event for its history (as a reserved
    // token), one write less.
    if (!(await deps.store.commit(parked.job, job.version))) return conflict;
    const waitMs = Math.max(1, token.retryAtMs - now);
    return {
      type: 'parked',
      report: { outcome: 'deferred', reason: 'rate-limited', delayMs: waitMs, waitMs, parked: true },
    };
  }
  return spreadReturn(deps, request, token, horizonMs, order);
}

/**
 * The tenant and batch a job's tokens are charged to where the limiter keeps the key's shares, and
 * the job (a call behind its share may take over a leading tenant's reserved token).
 */
export function shareClaim(job: Pick<Job, 'tenant' | 'batchId'> & { id?: string }): ShareClaim {
  return { tenant: job.tenant, batchId: job.batchId, ...(job.id === undefined ? {} : { jobId: job.id }) };
}

/**
 * The horizon of a call whose tenant or batch stands `standing` against its fair share
 * (fair-share.ts): ahead, it reserves no farther than a new job's first call; behind, as far as any
 * call may (its new jobs' first calls too), so it fills the line the others stand back from.
 */
export function shareHorizonMs(standing: Standing, horizonMs: number, fullMs: number): number {
  if (standing === 'ahead') return Math.min(horizonMs, minReserveHorizonMs);
  if (standing === 'behind' && fullMs > 0) return Math.max(horizonMs, fullMs);
  return horizonMs;
}

/**
 * The time of the token the call holds: one reserved for the job earlier (in its record, or in this
 * message at the job's version) and due, that no priority call took over (priority-lane.ts).
 */
async function heldToken(
  deps: AdmissionDeps,
  { job, message, bucket, now }: TokenRequest,
): Promise<number | undefined> {
  // The record's token first; when a priority call took it over, the token its holder then took
  // and waits for with this message (aws: a message holds it, and the record keeps the old one).
  for (const heldAt of new Set([job.tokenAt, message.tokenAt])) {
    if (heldAt === undefined || heldAt > now + earlyToleranceMs) continue;
    if ((await deps.rateLimiter.stillHeld?.(bucket, heldAt, job.id)) ?? true) return heldAt;
  }
  return undefined;
}

/** Its token is due soon and now its own: wait for exactly then, in line, with one message. */
async function waitForReserved(
  deps: AdmissionDeps,
  { workflow, job, now }: TokenRequest,
  token: Refused,
): Promise<TokenOutcome> {
  const waitMs = Math.max(0, token.retryAtMs - now);
  const delayMs = untilDeadline(job, now, waitMs);
  const report: StepReport = { outcome: 'deferred', reason: 'rate-limited', delayMs, waitMs, reserved: true };
  if (deps.queue.carriesTokens) {
    // The message holds the token. No commit: the record is as it was, and any commit of the job
    // makes this message stale (the token then stays unused: budget, never a call paid twice).
    await deps.queue.send(
      { jobId: job.id, version: job.version, tokenAt: token.retryAtMs },
      Math.min(delayMs, deps.queue.maxDelayMs),
    );
    return { type: 'waiting-message', report };
  }
  const event: EngineEvent = {
    type: 'no-token',
    retryAt: token.retryAtMs,
    refreshAfterMs: backlogRefreshMs,
    reserved: true,
  };
  const waiting = advance(workflow, job, event, now, deps.random);
  if (!(await deps.store.commit(waiting.job, job.version))) return conflict;
  await deps.queue.send(
    { jobId: job.id, version: waiting.job.version },
    Math.min(delayMs, deps.queue.maxDelayMs),
  );
  return { type: 'waiting-committed', report };
}

/**
 * Many jobs wait for the same next token: spread their returns over a few token intervals so they
 * do not all come back together and be deferred again. The spread orders them: calls that advance
 * a job come back before speculative polls, jobs nearer the end first, and new jobs' first calls
 * last, so a batch is admitted at the pace the budget sustains.
 */
async function spreadReturn(
  deps: AdmissionDeps,
  { workflow, job, step, bucket, now }: TokenRequest,
  token: Refused,
  horizonMs: number,
  order: CallOrder | undefined,
): Promise<TokenOutcome> {
  const waitMs = Math.max(1, token.retryAtMs - now);
  const spread =
    Math.min(30_000, 4 * waitMs) * (0.1 + 0.9 * waitPriority(workflow, job, step, undefined, order));
  let delayMs = untilDeadline(job, now, waitMs + Math.floor(deps.random() * spread));
  // Where the message holds a token (SQS), the return books its token at its spread time (or
  // within its horizon after): it then calls when it comes instead of finding the line busy again
  // and waiting with a second message. The time is the spread's, so the order above stands. A
  // return at the deadline books nothing: the job fails then.
  const beforeDeadlineMs = job.deadlineAt - (now + delayMs);
  // Where the limiter keeps the key's shares, none is booked while two tenants or more have work
  // (`sentBack`): a booking lies past the line's end, at a random time, where no tenant behind
  // can take it over (a take-over comes before the cutter's own next free token), so the first
  // tenant to ask would book the next minute's line before the others asked. Unbooked, the job
  // parks on its return and is released in share order (release.ts).
  const tokenAt =
    deps.queue.carriesTokens && beforeDeadlineMs > 0
      ? await bookReturn(deps, job, bucket, now, now + delayMs, Math.min(horizonMs, beforeDeadlineMs))
      : undefined;
  if (tokenAt !== undefined) delayMs = Math.max(0, tokenAt - now);
  const waiting = advance(
    workflow,
    job,
    { type: 'no-token', retryAt: now + delayMs, refreshAfterMs: backlogRefreshMs },
    now,
    deps.random,
  );
  if (!waiting.unchanged && !(await deps.store.commit(waiting.job, job.version))) return conflict;
  await deps.queue.send(
    { jobId: job.id, version: waiting.job.version, ...(tokenAt === undefined ? {} : { tokenAt }) },
    Math.min(delayMs, deps.queue.maxDelayMs),
  );
  return {
    type: 'spread',
    report: {
      outcome: 'deferred',
      reason: 'rate-limited',
      delayMs,
      waitMs,
      ...(tokenAt === undefined ? {} : { reserved: true }),
    },
  };
}

/**
 * Books the token of a job sent back to wait (`reserveAhead`, at `at` or within `withinMs` after);
 * undefined when the limiter cannot book, refuses, or fails (the job then takes its token when it
 * returns, as before).
 */
async function bookReturn(
  deps: AdmissionDeps,
  job: Job,
  bucket: string,
  now: number,
  at: number,
  withinMs: number,
): Promise<number | undefined> {
  if (!deps.rateLimiter.reserveAhead || at - now > deps.queue.maxDelayMs) return undefined;
  try {
    return await deps.rateLimiter.reserveAhead(bucket, now, {
      at,
      withinMs,
      share: shareClaim(job),
      sentBack: true,
    });
  } catch (error) {
    deps.log?.warn("could not book a waiting job's token; it takes one when it returns", {
      error: errorMessage(error),
    });
    return undefined;
  }
}
