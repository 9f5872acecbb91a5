/**
 * Reserve-next: a job's next call books its token in the commit that schedules it, so its one
 * message comes when the token does. With admission, a call due while the key's line is full is
 * parked instead.
 */

import { errorMessage } from '../../errors/error-message';
import { type Advanced, advance, findStep } from '../advance';
import type { EngineDeps } from '../deps';
import { isTerminal } from '../job-record';
import type { Workflow } from '../workflow';
import { mayPark, shareClaim } from './acquire-token';
import { defaultReserveHorizonMs, reserveHorizonMs, waitPriority } from './priority';

/**
 * The job's next call is due at its `nextRunAt`: reserve its token now (within the call's horizon
 * of then), in the commit that schedules it, so its one message comes when the token does, instead
 * of coming when due, finding the key's line full and being sent back with a second message and a
 * second commit. A token reserved here and lost with the commit (another writer won) is only
 * budget unused, never a call paid twice.
 */
export async function reserveNextToken(
  deps: EngineDeps,
  workflow: Workflow,
  bucket: string,
  advanced: Advanced,
  now: number,
): Promise<Advanced> {
  const { job, delayMs } = advanced;
  if (!deps.rateLimiter.reserveAhead || delayMs === undefined || advanced.unchanged) return advanced;
  if (isTerminal(job.status) || job.status === 'AWAITING_INPUT') return advanced;
  if (job.inFlightSince !== undefined || job.unsaved !== undefined || job.tokenAt !== undefined)
    return advanced;
  const step = findStep(workflow, job.step);
  if (!step || step.kind === 'fetch') return advanced;
  const horizonMs = deps.reserveHorizonMs ?? defaultReserveHorizonMs;
  const order = deps.callOrder?.(bucket);
  const withinMs = reserveHorizonMs(
    job,
    horizonMs,
    waitPriority(workflow, job, step, undefined, order),
    order,
  );
  if (withinMs <= 0) return advanced;
  const park = () =>
    mayPark(deps, job, now)
      ? advance(workflow, job, { type: 'park', bucket, withinMs, pending: true }, now, deps.random)
      : advanced;
  // A call too far ahead to book, or whose booking the bucket refused (its list of booked tokens is
  // full, or no time near the call is free). With admission, a call due while the key's line is
  // longer than the call's horizon (even now it would find no token within it; commits of this key
  // will keep coming, each running a release round) is parked instead of sent for its due time,
  // where it would likely find the line full. A line shorter than that (a key busy only now and
  // then) is no reason: such a call mostly finds a token, or reserves one with its message (no
  // write), when it comes, and a park costs a release commit.
  const unbooked = async () => {
    if (!deps.admission || job.nextRunAt - now > maxParkAheadMs) return advanced;
    const budget = await deps.rateLimiter.budget?.(bucket, now);
    const lineMs = budget === undefined ? 0 : (-budget.tokens / budget.ratePerSecond) * 1000;
    return lineMs > withinMs ? park() : advanced;
  };
  // The bucket keeps every token booked ahead (one item on AWS, at most `maxBookedTokens`): calls
  // due within twice the horizon book, and on aws (`bookAheadMs`) calls due up to 10 minutes ahead.
  const nearMs = 2 * horizonMs;
  const bookAheadMs = Math.max(nearMs, deps.bookAheadMs ?? nearMs);
  try {
    // A `high` job's next call cuts in at a token reserved near its due time, as its call would
    // when it came (priority-lane.ts), instead of booking one at the line's end.
    const cutAt =
      job.priority === 'high' && job.nextRunAt - now <= bookAheadMs
        ? await deps.rateLimiter.cutIn?.(bucket, now, job.id, { at: job.nextRunAt, share: shareClaim(job) })
        : undefined;
    if (cutAt !== undefined)
      return advance(workflow, job, { type: 'token-reserved', at: cutAt }, now, deps.random);
    if (job.nextRunAt - now > bookAheadMs) return await unbooked();
    const at = await deps.rateLimiter.reserveAhead(bucket, now, {
      at: job.nextRunAt,
      withinMs,
      share: shareClaim(job),
    });
    if (at === undefined) {
      if (job.nextRunAt - now > nearMs) return await unbooked();
      return deps.admission ? park() : advanced;
    }
    return advance(workflow, job, { type: 'token-reserved', at }, now, deps.random);
  } catch (error) {
    deps.log?.warn("could not reserve the next call's token; it takes one when it comes", {
      jobId: job.id,
      error: errorMessage(error),
    });
    return advanced;
  }
}

/** With admission, calls due farther ahead than this are never parked (sent for their due time). */
export const maxParkAheadMs = 10 * 60_000;
