/**
 * The callback sender: delivers the summary of a finished job to its `callbackUrl`, durably.
 *
 * The job API writes an outbox entry before it creates a job with a callback (engine/job-commands.ts), so
 * no callback depends on a process surviving: the sender looks at due entries, claims one by moving
 * it forward by a lease (a conditional write), and either finds the job still running (the entry
 * comes back later) or sends one attempt and records it on the job. A sender killed between its
 * attempt and the record sends again, with the same `webhook-id`, once the lease runs out.
 *
 * Retry schedule of a round: at once, then 5 s, 5 min, 30 min, 2 h, 5 h and 10 h after the
 * previous attempt (a longer Retry-After wins); a 2xx ends it delivered, a 410 ends it gone, a URL
 * the SSRF guard refuses ends it refused, the seventh failure ends it exhausted.
 */
import type { CallbackOutbox, CallbackOutboxEntry, CallbackSecrets } from '../engine/callback-ports';
import type { CallbackAttempt, CallbackDelivery } from '../engine/callback-record';
import { JobRequestError } from '../engine/job-commands';
import { isTerminal, type Job } from '../engine/job-record';
import type { Clock, JobStore, ReportStore } from '../engine/ports';
import type { Logger } from '../log/logger';
import { type CallbackOutcome, type CallbackSendOptions, sendCallback } from './send';

/** Delay before each attempt of a round, after the previous one (the first is immediate). */
export const callbackRetryDelaysMs = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
] as const;

/** A Retry-After longer than this is taken as this. */
const maxRetryAfterMs = 24 * 3_600_000;
/** How long a claimed entry is held by one sender. */
const leaseMs = 60_000;
/** Attempts kept on the job (the oldest are dropped beyond this). */
const maxRecordedAttempts = 50;

export interface CallbackSenderDeps {
  store: JobStore;
  outbox: CallbackOutbox;
  secrets: CallbackSecrets;
  reports: ReportStore;
  clock: Clock;
  send?: CallbackSendOptions | undefined;
  log?: Logger | undefined;
  /** How long report links in the summary live. Default: 24 hours. */
  linkTtlSeconds?: number | undefined;
  /** When to look again at a job that has not ended yet. Default: 30 seconds. */
  recheckMs?: number | undefined;
  onJobChange?: ((job: Job) => void) | undefined;
  /** Replaces the HTTP attempt (tests of the schedule). */
  attempt?:
    | ((
        url: string,
        body: string,
        headers: { messageId: string; secret: string; timestampSeconds: number },
      ) => Promise<CallbackOutcome>)
    | undefined;
}

export interface SenderRunResult {
  attempted: number;
  delivered: number;
  waiting: number;
}

function newDelivery(job: Job, round: number): CallbackDelivery {
  return { state: 'pending', round, messageId: `msg_${job.id}_${round}`, attempts: [] };
}

/** The JSON body of a job's callback: Standard Webhooks' `{type, timestamp, data}`. */
export async function callbackPayload(
  job: Job,
  reports: ReportStore,
  now: number,
  linkTtlSeconds: number,
): Promise<string> {
  const prefix = `reports/${job.id}/`;
  const files =
    job.status === 'SUCCEEDED'
      ? job.outputs.filter((key) => key.startsWith(prefix) && !key.startsWith(`${prefix}steps/`))
      : [];
  const links = await Promise.all(
    files.map(async (key) => ({
      name: key.slice(prefix.length),
      url: await reports.link(key, linkTtlSeconds),
    })),
  );
  const error =
    job.lastError && job.status === 'FAILED'
      ? { step: job.lastError.step, kind: job.lastError.kind, message: job.lastError.message }
      : undefined;
  return JSON.stringify({
    type: `job.${job.status.toLowerCase()}`,
    timestamp: new Date(now).toISOString(),
    data: {
      jobId: job.id,
      status: job.status,
      workflow: job.workflow,
      tenant: job.tenant,
      label: job.label,
      source: job.source,
      batchId: job.batchId,
      createdAt: new Date(job.createdAt).toISOString(),
      finishedAt: job.finishedAt === undefined ? undefined : new Date(job.finishedAt).toISOString(),
      error,
      usage: { calls: job.usage.calls, billedUnits: job.usage.billedUnits },
      report: { apiPath: `/jobs/${job.id}/report`, files: links, linksExpireInSeconds: linkTtlSeconds },
    },
  });
}

/** What to do after an attempt: the next state and, when pending, when to try again. */
export function nextAfter(
  outcome: CallbackOutcome,
  attemptsThisRound: number,
  now: number,
): { state: CallbackDelivery['state']; nextAttemptAt?: number } {
  if (outcome.kind === 'refused') return { state: 'refused' };
  if (outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300)
    return { state: 'delivered' };
  if (outcome.kind === 'answered' && outcome.status === 410) return { state: 'gone' };
  if (attemptsThisRound >= callbackRetryDelaysMs.length) return { state: 'exhausted' };
  const scheduled = callbackRetryDelaysMs[attemptsThisRound]!;
  const asked = outcome.kind === 'answered' ? Math.min(outcome.retryAfterMs ?? 0, maxRetryAfterMs) : 0;
  return { state: 'pending', nextAttemptAt: now + Math.max(scheduled, asked) };
}

/** Writes `change(job)` with the usual optimistic retry. Returns the stored job, or undefined if gone. */
async function commitChange(
  store: JobStore,
  jobId: string,
  change: (job: Job) => Job | undefined,
): Promise<Job | undefined> {
  for (let tries = 0; tries < 10; tries++) {
    const job = await store.get(jobId);
    if (!job) return undefined;
    const next = change(job);
    if (!next) return job;
    if (await store.commit(next, job.version)) return next;
  }
  throw new Error(`job ${jobId} keeps changing; its callback record will be written on the next try`);
}

/** One pass over the due outbox entries. */
export async function runCallbackSender(
  deps: CallbackSenderDeps,
  options: { limit?: number } = {},
): Promise<SenderRunResult> {
  const result: SenderRunResult = { attempted: 0, delivered: 0, waiting: 0 };
  const now = deps.clock.now();
  const entries = await deps.outbox.due(now, options.limit ?? 100);
  for (const entry of entries) {
    try {
      await handleEntry(deps, entry, result);
    } catch (error) {
      deps.log?.error('callback sender: an entry failed; it comes back when its lease ends', {
        jobId: entry.jobId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return result;
}

async function handleEntry(deps: CallbackSenderDeps, entry: CallbackOutboxEntry, result: SenderRunResult) {
  const now = deps.clock.now();
  const claimed: CallbackOutboxEntry = { jobId: entry.jobId, dueAt: now + leaseMs };
  if (!(await deps.outbox.move(entry, claimed.dueAt))) return;
  const job = await deps.store.get(entry.jobId);
  // No job (its create failed after the entry was written), or a job without a callback: nothing to send.
  if (!job?.callbackUrl) return deps.outbox.remove(claimed);
  if (!isTerminal(job.status)) {
    result.waiting += 1;
    await deps.outbox.move(claimed, now + (deps.recheckMs ?? 30_000));
    return;
  }
  const delivery = job.callback ?? newDelivery(job, 1);
  if (delivery.state !== 'pending') return deps.outbox.remove(claimed);
  if (delivery.nextAttemptAt !== undefined && delivery.nextAttemptAt > now) {
    await deps.outbox.move(claimed, delivery.nextAttemptAt);
    return;
  }

  const secret = await deps.secrets.secretFor(job.tenant);
  const body = await callbackPayload(job, deps.reports, now, deps.linkTtlSeconds ?? 24 * 3600);
  const timestampSeconds = Math.floor(now / 1000);
  const started = Date.now();
  result.attempted += 1;
  const outcome = deps.attempt
    ? await deps.attempt(job.callbackUrl, body, { messageId: delivery.messageId, secret, timestampSeconds })
    : await sendCallback(
        { url: job.callbackUrl, messageId: delivery.messageId, body, secret, timestampSeconds },
        deps.send,
        now,
      );
  const attempt: CallbackAttempt = {
    round: delivery.round,
    at: now,
    durationMs: Date.now() - started,
    ...(outcome.kind === 'answered'
      ? { status: outcome.status, retryAfterMs: outcome.retryAfterMs }
      : { error: outcome.message }),
  };
  const stored = await commitChange(deps.store, job.id, (current) => {
    const base = current.callback ?? delivery;
    if (base.round !== delivery.round || base.state !== 'pending') return undefined; // a resend moved on
    const attempts = [...base.attempts, attempt].slice(-maxRecordedAttempts);
    const thisRound = attempts.filter((item) => item.round === base.round).length;
    const next = nextAfter(outcome, thisRound, now);
    return {
      ...current,
      version: current.version + 1,
      updatedAt: now,
      callback: {
        ...base,
        attempts,
        state: next.state,
        nextAttemptAt: next.nextAttemptAt,
        deliveredAt: next.state === 'delivered' ? now : base.deliveredAt,
      },
    };
  });
  if (stored) deps.onJobChange?.(stored);
  const after = stored?.callback;
  deps.log?.info('callback attempt', {
    jobId: job.id,
    round: delivery.round,
    status: attempt.status,
    error: attempt.error,
    state: after?.state,
  });
  if (after?.state === 'delivered') result.delivered += 1;
  if (after?.state === 'pending' && after.nextAttemptAt !== undefined) {
    await deps.outbox.move(claimed, after.nextAttemptAt);
  } else {
    await deps.outbox.remove(claimed);
  }
}

/**
 * `opflow callbacks resend <jobId>`: a new round of delivery for a finished job's callback (after
 * the retries ran out, the receiver answered 410, or simply again), with a new `webhook-id`.
 */
export async function resendCallback(
  deps: Pick<CallbackSenderDeps, 'store' | 'outbox' | 'clock' | 'onJobChange'>,
  jobId: string,
): Promise<Job> {
  const now = deps.clock.now();
  const job = await deps.store.get(jobId);
  if (!job) throw new JobRequestError(`no job ${jobId}`, 404);
  if (!job.callbackUrl) throw new JobRequestError(`job ${jobId} has no callbackUrl`, 409);
  if (!isTerminal(job.status)) {
    throw new JobRequestError(`job ${jobId} is ${job.status}: its callback is sent when it ends`, 409);
  }
  if (job.callback?.state === 'pending') {
    throw new JobRequestError(
      `the callback of job ${jobId} is still being delivered (its retries are not over)`,
      409,
    );
  }
  const stored = await commitChange(deps.store, jobId, (current) => {
    const round = (current.callback?.round ?? 0) + 1;
    return {
      ...current,
      version: current.version + 1,
      updatedAt: now,
      callback: { ...newDelivery(current, round), attempts: current.callback?.attempts ?? [] },
    };
  });
  await deps.outbox.add(jobId, now);
  if (stored) deps.onJobChange?.(stored);
  return stored ?? job;
}
