/**
 * A job's history: one small event per committed change (status, step, attempts, polls, the usage
 * so far, the error of the moment), so a person can see every step on a timeline: when it ran, how
 * long, its calls and billed units (differences of the usage between events), its retries, polls
 * and errors. Recorded after the commit (from `onJobChange`): a crash in between loses one event,
 * never anything of the job, so the timeline is an account of what was seen, not the job's truth.
 */
import type { Job, JobError, JobStatus, JobUsage } from './job-record';
import type { SelectionAnswer } from './review-record';
import { skippedSteps } from './workflow';

export interface JobEvent {
  jobId: string;
  version: number;
  /** When the change was committed (the job's `updatedAt`). */
  at: number;
  status: JobStatus;
  step: string;
  attempts: number;
  polls: number;
  usage: JobUsage;
  error?: JobError | undefined;
  /** Set while the job waits for a selection offered by this step. */
  awaiting?: string | undefined;
  /** The answer (or first approval) given in this change: who, when and how. */
  answer?: SelectionAnswer | undefined;
  /** The notice round sent (or claimed) in this change, when it was one. */
  noticeRound?: number | undefined;
  /** How many earlier runs the job had (a retry starts a new run). */
  run: number;
  /** The steps this change skipped (left out by the input, or optional and failed), with why. */
  skipped?: { step: string; reason: string }[] | undefined;
}

export interface JobHistory {
  /** Keeps the event of this version of the job (a version already kept is left as it is). */
  record(job: Job): void;
  /** Every event of the job, oldest first (at most `historyEventLimit`, the latest). */
  list(jobId: string): Promise<JobEvent[]>;
  /** Waits for the events recorded so far to be written (a Lambda awaits it before returning). */
  flush?(): Promise<void>;
}

/**
 * How long a job's events are kept (both backends): 30 days after the event, by default. Locally
 * the events of older days are deleted as new ones are written (once an hour at most); on aws each
 * `HIST#` item carries the table's TTL attribute.
 */
export const defaultHistoryRetentionMs = 30 * 24 * 3600 * 1000;

/** The most events `list` answers for one job (the latest): a job that polls for days stays readable. */
export const historyEventLimit = 2000;

export function eventOf(job: Job): JobEvent {
  return {
    jobId: job.id,
    version: job.version,
    at: job.updatedAt,
    status: job.status,
    step: job.step,
    attempts: job.attempts,
    polls: job.polls,
    usage: job.usage,
    error: job.lastError,
    awaiting: job.status === 'AWAITING_INPUT' ? job.pending?.step : undefined,
    run: (job as Job & { runs?: unknown[] }).runs?.length ?? 0,
    ...reviewFacts(job),
    ...skippedNow(job),
  };
}

/** The steps skipped by this very change: "skipped: <reason>" on the job's timeline. */
function skippedNow(job: Job): Pick<JobEvent, 'skipped'> {
  const skipped = Object.entries(skippedSteps(job.context))
    .filter(([, why]) => (why.version ?? job.version) === job.version && why.at === job.updatedAt)
    .map(([step, why]) => ({ step, reason: why.message.trim() || why.kind }));
  return skipped.length > 0 ? { skipped } : {};
}

/** The answer given by this very change, and the notice round it sent, if it was such a change. */
function reviewFacts(job: Job): Pick<JobEvent, 'answer' | 'noticeRound'> {
  const answer = job.answers?.at(-1);
  const round = job.review?.rounds.at(-1);
  return {
    ...(answer?.version === job.version ? { answer } : {}),
    ...(round?.version === job.version ? { noticeRound: round.round } : {}),
  };
}
