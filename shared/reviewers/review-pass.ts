/**
 * The reviewers' pass: run by every process that sweeps (`opflow serve` locally), it looks at the
 * jobs awaiting a selection that a reviewers' rule matches and, for each, does what is due:
 *
 * - the timeout's default answer (answered `via: timeout` at the version read), then a notice to
 *   the rule's channels that it was taken (no link: nothing is asked);
 * - the next notice round (the first, then one per reminder), or a retry of a round's failed
 *   channels (at most 3 attempts each, 1 and 5 minutes apart).
 *
 * A round is claimed before anything is sent: a commit of the job at the version read marks the
 * round taken for a minute, so of many processes that meet one waiting job one sends it. The
 * deliveries are then recorded on the job (another commit). A process that dies between the two
 * leaves the claim to run out, and the round is sent again by the next pass: at least once, never
 * twice by two live processes. The notice of a default taken is sent by the process whose answer
 * (a commit at the version read) won, once, and recorded as a round of its own (`kind: timeout`);
 * it is not retried (the job has gone on), and a process that dies between the answer and the
 * notice sends none.
 */

import type { CallbackUrlPolicy } from '../callbacks/ssrf-guard';
import { autoSelection } from '../engine/advance';
import type { JobDeps } from '../engine/deps';
import { answerSelection, JobRequestError } from '../engine/job-commands';
import { isTerminal, type Job, type PendingSelection } from '../engine/job-record';
import {
  answerLabels,
  choiceText,
  labelsOf,
  type NoticeDelivery,
  type NoticeRound,
  openConfirmations,
  type ReviewState,
  reviewOfOffer,
  type SelectionAnswer,
  sameApprover,
  withReview,
} from '../engine/review-record';
import { sendForVersion } from '../engine/send-for-version';
import { errorMessage } from '../errors/error-message';
import { deliver } from './deliver';
import type { DefaultTakenNotice, Notice } from './render';
import { type ReviewersConfig, type ReviewRule, reviewDuration } from './review-config';
import { signReviewLink } from './review-link';
import { ruleFor } from './review-rules';
import type { ReviewerSecrets } from './reviewer-secrets';

export interface ReviewPassDeps
  extends Pick<
    JobDeps,
    'store' | 'queue' | 'clock' | 'workflows' | 'reports' | 'log' | 'onJobChange' | 'batches'
  > {
  config: ReviewersConfig;
  secrets: ReviewerSecrets;
  /** Where the confirmation page is reached (`opflow serve`'s OPFLOW_PUBLIC_URL, the stack's API URL). */
  publicUrl: string;
  policy?: CallbackUrlPolicy | undefined;
}

export interface ReviewPassResult {
  rounds: number;
  failedDeliveries: number;
  timedOut: number;
  /** True when the pass stopped at its time budget (`until`) with jobs left to look at: the next pass goes on. */
  outOfTime: boolean;
}

/** How long a claimed round is held by one process (well beyond its deliveries' deadlines). */
const claimMs = 60_000;
/** Delays before a failed channel's 2nd and 3rd attempt within a round. */
const retryDelaysMs = [60_000, 5 * 60_000] as const;
const maxAttempts = retryDelaysMs.length + 1;

/** The confirmation page of a token. */
export function reviewPageUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/review/${token}`;
}

/**
 * One pass over the jobs awaiting a selection (at most `limit`, 500 unless said). With `until` (a
 * time of `deps.clock`), it starts no job's notices after then, so a function that runs it within
 * its timeout stops in time; the jobs it did not reach are the next pass's. With `jobIds`, over
 * those jobs only.
 */
export async function reviewPass(
  deps: ReviewPassDeps,
  options: { limit?: number; until?: number | undefined; jobIds?: readonly string[] | undefined } = {},
): Promise<ReviewPassResult> {
  const result: ReviewPassResult = { rounds: 0, failedDeliveries: 0, timedOut: 0, outOfTime: false };
  if (deps.config.rules.length === 0) return result;
  if (options.jobIds) {
    // These jobs only (a first approval given from the CLI): the same claims, so a pass of
    // `opflow serve` that meets them too sends nothing twice.
    for (const id of options.jobIds) {
      const job = await deps.store.get(id);
      if (job?.status === 'AWAITING_INPUT') await reviewJob(deps, job, result);
    }
    return result;
  }
  let cursor: string | undefined;
  let seen = 0;
  const limit = options.limit ?? 500;
  do {
    const page = await deps.store.list({
      status: 'AWAITING_INPUT',
      limit: Math.min(100, limit - seen),
      cursor,
    });
    for (const job of page.jobs) {
      if (options.until !== undefined && deps.clock.now() >= options.until) {
        result.outOfTime = true;
        return result;
      }
      try {
        await reviewJob(deps, job, result);
      } catch (error) {
        deps.log?.error('reviewers: a job could not be looked at; the next pass tries again', {
          jobId: job.id,
          error: errorMessage(error),
        });
      }
    }
    seen += page.jobs.length;
    cursor = page.cursor;
  } while (cursor !== undefined && seen < limit);
  return result;
}

/** The review of the selection the job awaits: its own, or a new one from the rule. */
function currentReview(job: Job, pending: PendingSelection, rule: ReviewRule): ReviewState {
  if (reviewOfOffer(job.review, pending)) return job.review;
  const timeoutAt = rule.timeout ? pending.offeredAt + reviewDuration(rule.timeout.after) : undefined;
  const timeoutAnswer = rule.timeout && defaultAnswerOf(pending, rule.timeout.answer);
  return {
    step: pending.step,
    offeredAt: pending.offeredAt,
    rule: rule.name,
    approvals: rule.approvers,
    rounds: [],
    ...(timeoutAt !== undefined && timeoutAt < job.deadlineAt && rule.timeout
      ? { timeoutAt, timeoutAnswer, timeoutLabels: labelsOf(timeoutAnswer ?? [], pending.options) }
      : {}),
  };
}

/** A round that is due: its number, the channels it goes to, and whether it asks for a second approval. */
interface DueRound {
  round: number;
  channels: string[];
  kind?: NoticeRound['kind'];
}

/**
 * What is due: a new round, the call for a second approval (as soon as a first approver
 * confirmed and no notice has announced it), a retry of a round's failed channels, or nothing.
 */
function dueRound(
  review: ReviewState,
  rule: ReviewRule,
  now: number,
  first: SelectionAnswer | undefined,
): DueRound | undefined {
  const last = review.rounds.at(-1);
  if (last === undefined) return { round: 1, channels: rule.notify };
  if (last.claimedUntil > now) return undefined;
  if (first !== undefined && review.announcedApproval !== first.version)
    return { round: last.round + 1, channels: rule.notify, kind: 'approval' };
  const retry = last.deliveries.filter(
    (d) => d.state === 'failed' && d.attempts < maxAttempts && d.at + retryDelaysMs[d.attempts - 1]! <= now,
  );
  if (retry.length > 0) return { round: last.round, channels: retry.map((d) => d.channel), kind: last.kind };
  const claimedOnly = rule.notify.filter((name) => !last.deliveries.some((d) => d.channel === name));
  if (claimedOnly.length > 0) return { round: last.round, channels: claimedOnly, kind: last.kind }; // a claim that died
  if (review.nextNoticeAt !== undefined && review.nextNoticeAt <= now)
    return { round: last.round + 1, channels: rule.notify };
  return undefined;
}

/** When the next reminder is due once `due` is claimed: a new notice or reminder counts one of them. */
function nextNoticeAfter(
  review: ReviewState,
  rule: ReviewRule,
  due: DueRound,
  now: number,
): number | undefined {
  const isNew = !review.rounds.some((round) => round.round === due.round);
  if (!isNew || due.kind === 'approval') return review.nextNoticeAt;
  const sent = review.rounds.filter((round) => round.kind !== 'approval').length + 1;
  const remindsLeft = rule.remind ? rule.remind.times + 1 - sent : 0;
  return remindsLeft > 0 && rule.remind ? now + reviewDuration(rule.remind.every) : undefined;
}

async function reviewJob(deps: ReviewPassDeps, job: Job, result: ReviewPassResult): Promise<void> {
  const pending = job.pending;
  const rule = pending && ruleFor(deps.config, job);
  if (!pending || !rule) return;
  const now = deps.clock.now();
  const review = currentReview(job, pending, rule);
  if (review.timeoutAt !== undefined && review.timeoutAt <= now && rule.timeout) {
    const answered = await takeDefault(deps, job, pending, rule.timeout.answer);
    result.timedOut++;
    if (!answered) return;
    // The answer's message is held until the notice's deliveries are recorded: sent before, it
    // would name a version that record replaces (the runner drops it, and the job waits for the
    // sweeper's 30 s grace), and a step under way would lose its commit to the record.
    let held = answered;
    try {
      held = (await tellDefaultTaken(deps, answered, pending, review, rule, result)) ?? answered;
    } finally {
      await sendForVersion(deps, held);
    }
    return;
  }
  const first = openConfirmations(job).at(-1);
  const due = dueRound(review, rule, now, first);
  if (!due) return;
  const others = review.rounds.filter((round) => round.round !== due.round);
  const earlier = review.rounds.find((round) => round.round === due.round);
  const claimed: Job = {
    ...job,
    version: job.version + 1,
    updatedAt: now,
    ...withReview(job, {
      ...review,
      rounds: [
        ...others,
        {
          round: due.round,
          version: job.version + 1,
          claimedUntil: now + claimMs,
          deliveries: earlier?.deliveries ?? [],
          ...(due.kind ? { kind: due.kind } : {}),
        },
      ],
      nextNoticeAt: nextNoticeAfter(review, rule, due, now),
      // Every new round's notices say who approved first: that approval is announced.
      ...(first !== undefined && earlier === undefined ? { announcedApproval: first.version } : {}),
    }),
  };
  if (!(await deps.store.commit(claimed, job.version))) return; // another process has it
  deps.onJobChange?.(claimed);
  const deliveries = await sendRound(deps, claimed, pending, rule, due, now);
  result.rounds++;
  result.failedDeliveries += deliveries.filter((d) => d.state === 'failed').length;
  await recordDeliveries(deps, claimed.id, due.round, deliveries, claimed.review!);
}

/** The default answer's option ids for a pending selection. */
export function defaultAnswerOf(
  pending: PendingSelection,
  answer: ReviewRule['timeout'] extends infer T ? (T extends { answer: infer A } ? A : never) : never,
): string[] {
  if (answer === 'preselected')
    return autoSelection({
      prompt: pending.prompt,
      options: pending.options,
      min: pending.min,
      max: pending.max,
    });
  if (answer === 'all') return pending.options.map((option) => option.id).slice(0, pending.max);
  return [...answer];
}

/**
 * The default answer in words, each option by its label with its id beside it: `the suggested
 * options are taken: Keep claim 3 (f1), Drop claim 5 (f2)`.
 */
export function describeDefault(
  pending: PendingSelection,
  answer: Parameters<typeof defaultAnswerOf>[1],
): string {
  const options = defaultAnswerOf(pending, answer);
  const chosen = choiceText({ options, labels: labelsOf(options, pending.options) });
  const what =
    answer === 'preselected'
      ? 'the suggested options are'
      : answer === 'all'
        ? 'every option is'
        : 'the configured default is';
  return `${what} taken: ${chosen || 'none'}`;
}

/** Takes the default answer at the version read: the job answered, or undefined where another process (or a person) was first. */
async function takeDefault(
  deps: ReviewPassDeps,
  job: Job,
  pending: PendingSelection,
  answer: Parameters<typeof defaultAnswerOf>[1],
): Promise<Job | undefined> {
  try {
    const answered = await answerSelection(
      deps,
      job.id,
      defaultAnswerOf(pending, answer),
      { via: 'timeout' },
      { expectVersion: job.version, holdMessage: true },
    );
    deps.log?.info('reviewers: nobody answered in time; the default answer is taken', { jobId: job.id });
    return answered;
  } catch (error) {
    if (!(error instanceof JobRequestError)) throw error;
    if (error.reason !== 'conflict')
      deps.log?.error("reviewers: the timeout's default answer is refused; the job waits for its deadline", {
        jobId: job.id,
        error: error.message,
      });
    return undefined;
  }
}

/**
 * Tells the rule's channels that the default answer was taken: by the process whose answer won (so
 * once), one attempt per channel, recorded on the job as a round of kind `timeout`. The job's
 * message is held meanwhile (`holdMessage`); the job as recorded is returned, for its message.
 */
async function tellDefaultTaken(
  deps: ReviewPassDeps,
  answered: Job,
  pending: PendingSelection,
  review: ReviewState,
  rule: ReviewRule,
  result: ReviewPassResult,
): Promise<Job | undefined> {
  const taken = answered.answers?.at(-1);
  if (taken?.via !== 'timeout' || !rule.timeout) return undefined;
  const notice: DefaultTakenNotice = {
    kind: 'default-taken',
    jobId: answered.id,
    workflow: answered.workflow,
    tenant: answered.tenant,
    label: answered.label,
    prompt: pending.prompt,
    options: taken.options,
    labels: taken.labels ?? [],
    at: taken.at,
    after: rule.timeout.after,
  };
  const round = (review.rounds.at(-1)?.round ?? 0) + 1;
  const deliveries = await Promise.all(
    rule.notify.map(async (name): Promise<NoticeDelivery> => {
      const outcome = await deliver(name, deps.config.channels[name]!, {
        secrets: deps.secrets,
        policy: deps.policy,
        noticeFor: () => notice,
        messageId: `rev_${answered.id}_${review.offeredAt}_timeout`,
        now: deps.clock.now(),
      });
      if (!outcome.ok)
        deps.log?.warn('reviewers: the notice of the default answer taken was not delivered', {
          jobId: answered.id,
          channel: name,
          error: outcome.error,
        });
      return outcome.ok
        ? { channel: name, state: 'sent', attempts: 1, at: deps.clock.now() }
        : { channel: name, state: 'failed', attempts: 1, at: deps.clock.now(), error: outcome.error };
    }),
  );
  result.rounds++;
  result.failedDeliveries += deliveries.filter((d) => d.state === 'failed').length;
  return await recordDeliveries(deps, answered.id, round, deliveries, review, {
    kind: 'timeout',
    heldAt: answered.version,
  });
}

async function sendRound(
  deps: ReviewPassDeps,
  job: Job,
  pending: PendingSelection,
  rule: ReviewRule,
  due: DueRound,
  now: number,
): Promise<NoticeDelivery[]> {
  const review = job.review!;
  const key = await deps.secrets.linkKey();
  const expiresAt = Math.min(
    now + reviewDuration(deps.config.linkLifetime),
    review.timeoutAt ?? job.deadlineAt,
    job.deadlineAt,
  );
  const first = openConfirmations(job).at(-1);
  const noticeFor = (recipient: string): Notice => ({
    jobId: job.id,
    workflow: job.workflow,
    tenant: job.tenant,
    label: job.label,
    prompt: pending.prompt,
    options: pending.options,
    min: pending.min,
    max: pending.max,
    round: due.round,
    ...(due.kind === 'approval' ? { secondApproval: true } : {}),
    link: reviewPageUrl(
      deps.publicUrl,
      signReviewLink(
        { jobId: job.id, step: pending.step, offeredAt: pending.offeredAt, recipient, expiresAt },
        key,
      ),
    ),
    linkExpiresAt: expiresAt,
    timeout:
      review.timeoutAt !== undefined && rule.timeout
        ? {
            at: review.timeoutAt,
            answer: describeDefault(pending, rule.timeout.answer),
            options: defaultAnswerOf(pending, rule.timeout.answer),
          }
        : undefined,
    approvals: review.approvals,
    firstApproval: first && {
      by: first.by,
      options: first.options,
      labels: answerLabels(first, pending),
    },
  });
  const earlier = review.rounds.find((round) => round.round === due.round)?.deliveries ?? [];
  return Promise.all(
    due.channels.map(async (name): Promise<NoticeDelivery> => {
      const channel = deps.config.channels[name]!;
      const outcome = await deliver(name, channel, {
        secrets: deps.secrets,
        policy: deps.policy,
        noticeFor,
        // The first approver is asked for nothing more: their own mail is left out.
        skip: first ? (recipient) => sameApprover(recipient, first.by) : undefined,
        messageId: `rev_${job.id}_${pending.offeredAt}_${due.round}`,
        now,
      });
      const attempts = (earlier.find((d) => d.channel === name)?.attempts ?? 0) + 1;
      if (!outcome.ok)
        deps.log?.warn('reviewers: a notice was not delivered', {
          jobId: job.id,
          channel: name,
          attempts,
          error: outcome.error,
        });
      return outcome.ok
        ? { channel: name, state: 'sent', attempts, at: deps.clock.now() }
        : { channel: name, state: 'failed', attempts, at: deps.clock.now(), error: outcome.error };
    }),
  );
}

/**
 * Records a round's deliveries on the job (merged with the round's earlier ones), whatever else
 * changed, while the job waits for a person or has finished, in the review `of` (never a later
 * selection's). With `added`, the round is a new one of that kind (the notice of a default taken,
 * sent after the job went on, its message held at `heldAt`): it joins `of`, the review the pass
 * read, where the job had none stored. A job that went on otherwise (a person answered while
 * the notices went out) is not written: its message names its version, and a step may be under
 * way; the deliveries are in the log only. Returns the job as recorded.
 */
async function recordDeliveries(
  deps: ReviewPassDeps,
  jobId: string,
  round: number,
  deliveries: NoticeDelivery[],
  of: ReviewState,
  added?: { kind: 'timeout'; heldAt: number },
): Promise<Job | undefined> {
  for (let tries = 0; tries < 5; tries++) {
    const job = await deps.store.get(jobId);
    if (!job) return undefined;
    if (job.status !== 'AWAITING_INPUT' && !isTerminal(job.status) && job.version !== added?.heldAt) {
      deps.log?.info("reviewers: the job went on before its round's deliveries were recorded", {
        jobId,
        round,
        deliveries: deliveries.map((d) => `${d.channel}: ${d.state}`).join(', '),
      });
      return undefined;
    }
    let review = job.review;
    if (!(review?.step === of.step && review.offeredAt === of.offeredAt)) {
      // A later selection's review (the job answered, went on and was offered another): its rounds
      // are not this one's (merged there, this round would end their claim and stand for them).
      if (!added || (review && review.offeredAt > of.offeredAt)) {
        deps.log?.info(
          "reviewers: the job awaits another selection; its round's deliveries are not recorded",
          {
            jobId,
            round,
            deliveries: deliveries.map((d) => `${d.channel}: ${d.state}`).join(', '),
          },
        );
        return undefined;
      }
      review = of;
    }
    const rounds = review?.rounds;
    const current =
      rounds?.find((r) => r.round === round) ??
      (added && { round, version: 0, claimedUntil: 0, deliveries: [], kind: added.kind });
    if (!review || !rounds || !current) return undefined;
    const merged: NoticeRound = {
      ...current,
      version: job.version + 1,
      claimedUntil: 0,
      deliveries: [
        ...current.deliveries.filter((d) => !deliveries.some((n) => n.channel === d.channel)),
        ...deliveries,
      ],
    };
    const next: Job = {
      ...job,
      version: job.version + 1,
      updatedAt: deps.clock.now(),
      ...withReview(job, {
        ...review,
        rounds: rounds.some((r) => r.round === round)
          ? rounds.map((r) => (r.round === round ? merged : r))
          : [...rounds, merged],
      }),
    };
    if (await deps.store.commit(next, job.version)) {
      deps.onJobChange?.(next);
      return next;
    }
  }
  deps.log?.warn('reviewers: the deliveries of a round could not be recorded (the job kept changing)', {
    jobId,
    round,
  });
  return undefined;
}
