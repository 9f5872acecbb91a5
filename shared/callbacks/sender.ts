/**
 * The callback sender: delivers the summary of a finished job to its `callbackUrl`, durably.
 *
 * The job API writes an outbox entry before it creates a job with a callback (engine/job-commands.ts), so
 * no callback depends on a process surviving: the sender looks at due entries, claims one by moving
 * it forward by a lease (a conditional write), and either finds the job still running (the entry
 * comes back later, or at once when the job's end brings it forward) or sends one attempt and
 * records it on the job. A sender killed between its attempt and the record sends again, with the
 * same `webhook-id`, once the lease runs out.
 *
 * Deliveries run side by side: at most `concurrency` at once (default 8) and at most `perHost` to one
 * receiver host (default 2); an entry whose host is at its bound is put back a few seconds, unsent,
 * so one slow receiver cannot hold the others. Each attempt has an overall deadline (send.ts).
 *
 * Retry schedule of a round: at once, then 5 s, 5 min, 30 min, 2 h, 5 h and 10 h after the
 * previous attempt (a longer Retry-After wins); a 2xx ends it delivered, a 410 ends it gone, a URL
 * the SSRF guard refuses (or a name that does not exist) ends it refused, the seventh failure ends
 * it exhausted. A temporary lookup failure (EAI_AGAIN) is a failure like a refused connection.
 */
import type { CallbackOutbox, CallbackOutboxEntry, CallbackSecrets } from '../engine/callback-ports';
import type { CallbackAttempt, CallbackDelivery } from '../engine/callback-record';
import { JobRequestError } from '../engine/job-commands';
import { isTerminal, type Job } from '../engine/job-record';
import type { Clock, JobStore, ReportStore } from '../engine/ports';
import { errorMessage } from '../errors/error-message';
import type { Logger } from '../log/logger';
import { defaultRecheckMs } from './notifier';
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
/** How long a claimed entry is held by one sender (well beyond one attempt's deadline). */
const leaseMs = 60_000;
/** Attempts kept on the job (the oldest are dropped beyond this). */
const maxRecordedAttempts = 50;

/** Where the files of a job's report can be fetched by a receiver. */
export interface ReportLinks {
  link(jobId: string, file: { key: string; name: string }): Promise<string>;
  /** How long a link works, when it expires. */
  expiresInSeconds?: number | undefined;
}

/** Presigned links of the report store (aws: S3, expiring after `ttlSeconds`). */
export function presignedReportLinks(reports: ReportStore, ttlSeconds: number): ReportLinks {
  return { link: (_jobId, file) => reports.link(file.key, ttlSeconds), expiresInSeconds: ttlSeconds };
}

/**
 * Links to `GET /jobs/{id}/report/{file}` of the job API at `publicUrl` (`opflow serve` with
 * OPFLOW_PUBLIC_URL): they need the API's token, as every route does, and do not expire.
 */
export function servedReportLinks(publicUrl: string): ReportLinks {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    link: async (jobId, file) =>
      `${base}/jobs/${encodeURIComponent(jobId)}/report/${file.name.split('/').map(encodeURIComponent).join('/')}`,
  };
}

/**
 * The bounds shared by every pass of one sender: deliveries at once, deliveries to one host at once,
 * and the jobs taken by a pass (so overlapping passes never take one entry twice).
 */
export class DeliverySlots {
  readonly concurrency: number;
  readonly perHost: number;
  readonly jobs = new Set<string>();
  readonly #hosts = new Map<string, number>();
  readonly #waiting: (() => void)[] = [];
  #active = 0;

  constructor(options: { concurrency?: number | undefined; perHost?: number | undefined } = {}) {
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.perHost = Math.max(1, options.perHost ?? 2);
  }

  /** Waits for one of the `concurrency` slots. */
  async acquire(): Promise<void> {
    if (this.#active < this.concurrency) {
      this.#active += 1;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#active -= 1;
  }

  /** Takes one of a host's slots if it has one free. */
  tryHost(host: string): boolean {
    const used = this.#hosts.get(host) ?? 0;
    if (used >= this.perHost) return false;
    this.#hosts.set(host, used + 1);
    return true;
  }

  releaseHost(host: string): void {
    const used = (this.#hosts.get(host) ?? 1) - 1;
    if (used <= 0) this.#hosts.delete(host);
    else this.#hosts.set(host, used);
  }

  get busy(): number {
    return this.#active;
  }
}

export interface CallbackSenderDeps {
  store: JobStore;
  outbox: CallbackOutbox;
  secrets: CallbackSecrets;
  clock: Clock;
  send?: CallbackSendOptions | undefined;
  log?: Logger | undefined;
  /** Links to the report's files in the payload; without, the payload names the files only. */
  reportLinks?: ReportLinks | undefined;
  /** When to look again at a job that has not ended yet (its end brings the entry forward). Default: 15 minutes. */
  recheckMs?: number | undefined;
  /** How long an entry whose receiver host is at its bound is put back. Default: 5 seconds. */
  hostBusyDelayMs?: number | undefined;
  /** The bounds, shared by the passes of one sender. Default: 8 at once, 2 per host. */
  slots?: DeliverySlots | undefined;
  /**
   * Told each time an entry is put at a later time (a retry, a recheck, a busy host), after the
   * write: on aws, a delayed queue message that brings the sender back then.
   */
  wake?: ((entry: CallbackOutboxEntry) => Promise<void>) | undefined;
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
  /** Put back unsent because their receiver host was at its bound. */
  deferred: number;
  /** Jobs whose entry could not be handled (a store error): their entry comes back after its lease. */
  failed: string[];
}

function newDelivery(job: Job, round: number): CallbackDelivery {
  return { state: 'pending', round, messageId: `msg_${job.id}_${round}`, attempts: [] };
}

/**
 * The JSON body of a job's callback: Standard Webhooks' `{type, timestamp, data}`. The report's
 * files are named, each with a link the receiver can use when there is one (never a path on this
 * machine).
 */
export async function callbackPayload(
  job: Job,
  now: number,
  reportLinks: ReportLinks | undefined,
): Promise<string> {
  const prefix = `reports/${job.id}/`;
  const files =
    job.status === 'SUCCEEDED'
      ? job.outputs.filter((key) => key.startsWith(prefix) && !key.startsWith(`${prefix}steps/`))
      : [];
  const named = await Promise.all(
    files.map(async (key) => {
      const name = key.slice(prefix.length);
      return { name, url: await reportLinks?.link(job.id, { key, name }) };
    }),
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
      report: {
        apiPath: `/jobs/${job.id}/report`,
        files: named,
        linksExpireInSeconds: reportLinks?.expiresInSeconds,
      },
    },
  });
}

/** What to do after an attempt: the next state and, when pending, when to try again. */
export function nextAfter(
  outcome: Exclude<CallbackOutcome, { kind: 'interrupted' }>,
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

/**
 * Whether `current` is still the finished run `read` was: the callback record is written only on a
 * job that has ended (no message in flight, no step under way), never on a run retried since.
 */
function sameEnd(current: Job, read: Job): boolean {
  return isTerminal(current.status) && (current.runs?.length ?? 0) === (read.runs?.length ?? 0);
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

/** Puts an entry at `dueAt` if it is still where it was claimed, and says so to `wake`. */
async function moveAndWake(deps: CallbackSenderDeps, claimed: CallbackOutboxEntry, dueAt: number) {
  if (await deps.outbox.move(claimed, dueAt)) await deps.wake?.({ jobId: claimed.jobId, dueAt });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return url;
  }
}

/**
 * One pass over the due outbox entries (at most `limit`), delivered side by side within the
 * sender's bounds. `signal` is shutdown: attempts in flight end at once and their entries stay due.
 */
export async function runCallbackSender(
  deps: CallbackSenderDeps,
  options: { limit?: number; signal?: AbortSignal | undefined } = {},
): Promise<SenderRunResult> {
  const now = deps.clock.now();
  const slots = deps.slots ?? new DeliverySlots();
  const entries = (await deps.outbox.due(now, options.limit ?? 100)).filter(
    (entry) => !slots.jobs.has(entry.jobId),
  );
  return deliverEntries(deps, entries, slots, options.signal);
}

/**
 * The entries of these jobs that are due, delivered like a pass (an entry not yet due is told to
 * `wake` again for its time): the aws sender, woken by queue messages that name jobs.
 */
export async function runCallbackSenderFor(
  deps: CallbackSenderDeps,
  jobIds: readonly string[],
  options: { signal?: AbortSignal | undefined } = {},
): Promise<SenderRunResult> {
  const now = deps.clock.now();
  const slots = deps.slots ?? new DeliverySlots();
  const entries: CallbackOutboxEntry[] = [];
  for (const jobId of new Set(jobIds)) {
    if (slots.jobs.has(jobId)) continue;
    const entry = await deps.outbox.entryOf(jobId);
    if (!entry) continue; // delivered, gone or refused meanwhile: nothing to do
    if (entry.dueAt <= now) entries.push(entry);
    else await deps.wake?.(entry);
  }
  return deliverEntries(deps, entries, slots, options.signal);
}

async function deliverEntries(
  deps: CallbackSenderDeps,
  entries: CallbackOutboxEntry[],
  slots: DeliverySlots,
  signal: AbortSignal | undefined,
): Promise<SenderRunResult> {
  const result: SenderRunResult = { attempted: 0, delivered: 0, waiting: 0, deferred: 0, failed: [] };
  for (const entry of entries) slots.jobs.add(entry.jobId);
  await Promise.all(
    entries.map(async (entry) => {
      await slots.acquire();
      try {
        if (!signal?.aborted) await handleEntry(deps, entry, result, slots, signal);
      } catch (error) {
        result.failed.push(entry.jobId);
        deps.log?.error('callback sender: an entry failed; it comes back when its lease ends', {
          jobId: entry.jobId,
          error: errorMessage(error),
        });
      } finally {
        slots.release();
        slots.jobs.delete(entry.jobId);
      }
    }),
  );
  return result;
}

async function handleEntry(
  deps: CallbackSenderDeps,
  entry: CallbackOutboxEntry,
  result: SenderRunResult,
  slots: DeliverySlots,
  signal: AbortSignal | undefined,
) {
  const now = deps.clock.now();
  const claimed: CallbackOutboxEntry = { jobId: entry.jobId, dueAt: now + leaseMs };
  if (!(await deps.outbox.move(entry, claimed.dueAt))) return;
  const job = await deps.store.get(entry.jobId);
  // No job (its create failed after the entry was written), or a job without a callback: nothing to send.
  if (!job?.callbackUrl) return deps.outbox.remove(claimed);
  if (!isTerminal(job.status)) {
    result.waiting += 1;
    return moveAndWake(deps, claimed, now + (deps.recheckMs ?? defaultRecheckMs));
  }
  // A run's first delivery is its round: a retried job whose earlier end's attempt was never
  // recorded (retried while it was being sent) still gets a `webhook-id` of its own.
  const delivery = job.callback ?? newDelivery(job, (job.runs?.length ?? 0) + 1);
  if (delivery.state !== 'pending') return deps.outbox.remove(claimed);
  if (delivery.nextAttemptAt !== undefined && delivery.nextAttemptAt > now) {
    return moveAndWake(deps, claimed, delivery.nextAttemptAt);
  }
  const host = hostOf(job.callbackUrl);
  if (!slots.tryHost(host)) {
    result.deferred += 1;
    return moveAndWake(deps, claimed, now + (deps.hostBusyDelayMs ?? 5_000));
  }
  try {
    await attemptAndRecord(deps, job, job.callbackUrl, delivery, claimed, now, result, signal);
  } finally {
    slots.releaseHost(host);
  }
}

async function attemptAndRecord(
  deps: CallbackSenderDeps,
  job: Job,
  url: string,
  delivery: CallbackDelivery,
  claimed: CallbackOutboxEntry,
  now: number,
  result: SenderRunResult,
  signal: AbortSignal | undefined,
) {
  const secret = await deps.secrets.secretFor(job.tenant);
  const body = await callbackPayload(job, now, deps.reportLinks);
  const timestampSeconds = Math.floor(now / 1000);
  const started = Date.now();
  const outcome = deps.attempt
    ? await deps.attempt(url, body, { messageId: delivery.messageId, secret, timestampSeconds })
    : await sendCallback(
        { url, messageId: delivery.messageId, body, secret, timestampSeconds },
        { ...deps.send, signal },
        now,
      );
  if (outcome.kind === 'interrupted') {
    // Shutdown: not an attempt. The entry is due again at once for the next sender.
    await deps.outbox.move(claimed, now);
    return;
  }
  result.attempted += 1;
  const attempt: CallbackAttempt = {
    round: delivery.round,
    at: now,
    durationMs: Date.now() - started,
    ...(outcome.kind === 'answered'
      ? { status: outcome.status, retryAfterMs: outcome.retryAfterMs }
      : { error: outcome.message }),
  };
  const stored = await commitChange(deps.store, job.id, (current) => {
    // Retried meanwhile (`opflow retry`): the attempt was of the run that ended, and the new run's
    // message names the version it has, a step of it perhaps under way: the job is not written.
    if (!sameEnd(current, job)) return undefined;
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
    await moveAndWake(deps, claimed, after.nextAttemptAt);
  } else {
    await deps.outbox.remove(claimed);
  }
}

/**
 * `opflow callbacks resend <jobId>`: a new round of delivery for a finished job's callback (after
 * the retries ran out, the receiver answered 410, or simply again), with a new `webhook-id`.
 */
export async function resendCallback(
  deps: Pick<CallbackSenderDeps, 'store' | 'outbox' | 'clock' | 'onJobChange' | 'wake'>,
  jobId: string,
): Promise<Job> {
  const now = deps.clock.now();
  const job = await deps.store.get(jobId);
  if (!job) throw new JobRequestError(`no job ${jobId}`, 'not-found');
  if (!job.callbackUrl) throw new JobRequestError(`job ${jobId} has no callbackUrl`, 'conflict');
  if (!isTerminal(job.status)) {
    throw new JobRequestError(`job ${jobId} is ${job.status}: its callback is sent when it ends`, 'conflict');
  }
  if (job.callback?.state === 'pending') {
    throw new JobRequestError(
      `the callback of job ${jobId} is still being delivered (its retries are not over)`,
      'conflict',
    );
  }
  const stored = await commitChange(deps.store, jobId, (current) => {
    // Retried since it was read: its new run is under way (its message names its version).
    if (!sameEnd(current, job)) throw new JobRequestError(`job ${jobId} was retried meanwhile`, 'conflict');
    const round = (current.callback?.round ?? 0) + 1;
    return {
      ...current,
      version: current.version + 1,
      updatedAt: now,
      callback: { ...newDelivery(current, round), attempts: current.callback?.attempts ?? [] },
    };
  });
  await deps.outbox.add(jobId, now);
  // The caller makes the first attempt at once; a wake-up after the lease covers a caller that dies first.
  await deps.wake?.({ jobId, dueAt: now + leaseMs });
  if (stored) deps.onJobChange?.(stored);
  return stored ?? job;
}
