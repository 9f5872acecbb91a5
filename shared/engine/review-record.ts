/**
 * What a job keeps about the answers to its selection points and about the people asked for them:
 * who answered, when and how (`SelectionAnswer`, in `Job.answers`), and, while a configured review
 * runs (shared/reviewers), its state (`ReviewState`, in `Job.review`; earlier selection points' in
 * `Job.pastReviews`): the notices sent per round,
 * the first approver's confirmation when two are needed, the reminder and timeout times.
 * Every change is a versioned commit of the job, so many processes that meet one waiting job send
 * one notice per round.
 */

/** How an answer was given. `timeout`: the configured default, applied when nobody answered in time. */
export const answerChannels = ['link', 'cli', 'api', 'mcp', 'dashboard', 'timeout', 'bulk'] as const;
export type AnswerChannel = (typeof answerChannels)[number];

/** Who gave an answer and through what. `by`: a person's name or mail address, when known. */
export interface AnswerOrigin {
  via: AnswerChannel;
  by?: string | undefined;
}

/** One answer (or, with two approvers, one confirmation) at a selection point. */
export interface SelectionAnswer extends AnswerOrigin {
  /** The step that offered the options. */
  step: string;
  options: string[];
  /**
   * The labels of `options` as the person saw them (same order), recorded from the offer answered.
   * Absent on answers recorded before labels were kept: `answerLabels` looks them up then.
   */
  labels?: string[] | undefined;
  at: number;
  /** The job's version that recorded it. */
  version: number;
  /** False for a first approver's confirmation that waits for the second. Absent: it applied. */
  applied?: boolean | undefined;
}

/** One channel's delivery within a notice round. Never holds a URL, an address's secret or a link. */
export interface NoticeDelivery {
  channel: string;
  state: 'sent' | 'failed';
  attempts: number;
  at: number;
  /** Why the last attempt failed (a status or a connection error), never a URL or token. */
  error?: string | undefined;
}

/** One round of notices: the first (1), then one per reminder. */
export interface NoticeRound {
  round: number;
  /** The job's version that last changed this round (its claim, or its deliveries). */
  version: number;
  /** Taken by a process until `claimedUntil`; another process sends only after that. */
  claimedUntil: number;
  deliveries: NoticeDelivery[];
  /**
   * `approval`: sent as soon as a first approver confirmed, to ask the others for the second
   * confirmation (not a reminder: it leaves the reminders' count and times as they were).
   * `timeout`: the notice that the timeout's default answer was taken (sent once, after it).
   */
  kind?: 'approval' | 'timeout' | undefined;
}

export interface ReviewState {
  /** The selection point this review belongs to (a new offer starts a new review). */
  step: string;
  offeredAt: number;
  /** The reviewers' rule that applies (its name in the config). */
  rule: string;
  /** Confirmations needed from distinct people (1, or 2 with a second approver). */
  approvals: number;
  rounds: NoticeRound[];
  /** When the next reminder round is due; absent when none is left. */
  nextNoticeAt?: number | undefined;
  /** When the default answer is applied; absent without a timeout. */
  timeoutAt?: number | undefined;
  /** The option ids the timeout's default answer takes (recorded with `timeoutAt`). */
  timeoutAnswer?: string[] | undefined;
  /**
   * The labels of `timeoutAnswer` as the offer named them (same order). Absent on reviews recorded
   * before they were kept: `timeoutLabels` looks them up in the offer still awaited then.
   */
  timeoutLabels?: string[] | undefined;
  /** The job version that recorded the first approval the notices last announced (each is announced once). */
  announcedApproval?: number | undefined;
}

/** The labels of option ids among an offer's options, in the ids' order ('' for an id it lacks). */
export function labelsOf(
  ids: readonly string[],
  options: readonly { id: string; label: string }[],
): string[] {
  return ids.map((id) => options.find((option) => option.id === id)?.label ?? '');
}

/**
 * An answer's labels: those it recorded, else (an answer recorded before labels were kept) those of
 * the offer still awaited at its step, else none.
 */
export function answerLabels(
  answer: Pick<SelectionAnswer, 'step' | 'options' | 'labels'>,
  pending: { step: string; options: readonly { id: string; label: string }[] } | undefined,
): string[] | undefined {
  if (answer.labels) return answer.labels;
  return pending?.step === answer.step ? labelsOf(answer.options, pending.options) : undefined;
}

/** What an answer chose as a person reads it: `Keep claim 3 (f1), Drop claim 5 (f2)`; the bare id where no label is known. */
export function choiceText(answer: Pick<SelectionAnswer, 'options' | 'labels'>): string {
  return answer.options
    .map((id, index) => {
      const label = answer.labels?.[index]?.trim();
      return label && label !== id ? `${label} (${id})` : id;
    })
    .join(', ');
}

/**
 * The labels of a review's default answer at the timeout: those it recorded, else (a review recorded
 * before they were kept) those of the offer still awaited at its step, else none.
 */
export function timeoutLabels(
  review: Pick<ReviewState, 'step' | 'timeoutAnswer' | 'timeoutLabels'>,
  pending: { step: string; options: readonly { id: string; label: string }[] } | undefined,
): string[] | undefined {
  if (!review.timeoutAnswer) return undefined;
  return answerLabels(
    { step: review.step, options: review.timeoutAnswer, labels: review.timeoutLabels },
    pending,
  );
}

/** Whether a review belongs to the selection the job awaits now. */
export function reviewOfOffer(
  review: ReviewState | undefined,
  pending: { step: string; offeredAt: number } | undefined,
): review is ReviewState {
  return (
    review !== undefined &&
    pending !== undefined &&
    review.step === pending.step &&
    review.offeredAt === pending.offeredAt
  );
}

/** How many earlier selection points' reviews a job keeps (`Job.pastReviews`). */
const keptPastReviews = 20;

/**
 * The job's review fields with `review` stored as its current one. A review of another offer
 * stored before it moves to `pastReviews` with its claims ended and nothing left due (its rounds
 * were sent; a round still claimed there was cut short by the job going on), so the notices of an
 * earlier selection point are not lost when the job waits at the next.
 */
export function withReview(
  job: { review?: ReviewState | undefined; pastReviews?: ReviewState[] | undefined },
  review: ReviewState,
): { review: ReviewState; pastReviews?: ReviewState[] | undefined } {
  const stored = job.review;
  if (!stored || (stored.step === review.step && stored.offeredAt === review.offeredAt))
    return { review, ...(job.pastReviews ? { pastReviews: job.pastReviews } : {}) };
  const { nextNoticeAt: _next, ...closed } = stored;
  const past: ReviewState = {
    ...closed,
    rounds: stored.rounds.map((round) => ({ ...round, claimedUntil: 0 })),
  };
  return { review, pastReviews: [...(job.pastReviews ?? []), past].slice(-keptPastReviews) };
}

/** The confirmations given so far at the job's current selection point, waiting for a second approver. */
export function openConfirmations(job: {
  answers?: SelectionAnswer[] | undefined;
  pending?: { step: string; offeredAt: number } | undefined;
}): SelectionAnswer[] {
  const pending = job.pending;
  if (!pending) return [];
  return (job.answers ?? []).filter(
    (answer) => answer.applied === false && answer.step === pending.step && answer.at >= pending.offeredAt,
  );
}

/** A person's name as compared between approvers: trimmed, lower case. */
export function sameApprover(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** What an answer was in its selection's approval rounds. */
export type ApprovalRole = 'approver' | 'first approver' | 'second approver' | 'default at timeout';

/** One selection point's rounds, as a person reads them (the job API's view, `selectionRounds`). */
export interface SelectionRounds {
  step: string;
  /** The answers in order: round 1 the first approver (or the one approver), round 2 the second. */
  approvals: (SelectionAnswer & { round: number; role: ApprovalRole })[];
  /** The notices of the reviews of this step, in the order sent: the first, the call for a second approval, reminders. */
  notices?:
    | (NoticeRound & {
        label: 'notice' | 'call for the second approval' | 'reminder' | 'notice of the default taken';
      })[]
    | undefined;
  /** When the default answer is taken if nobody answers, and what it is (option ids, and their labels when known). */
  timeout?: { at: number; answer?: string[] | undefined; labels?: string[] | undefined } | undefined;
}

/**
 * Whether a selection point had rounds worth showing beside its answer: a reviewers' notice, a
 * second approver (or a first one waiting), or the default taken at the timeout.
 */
export function hadRounds(selection: {
  approvals: readonly { role: ApprovalRole }[];
  notices?: readonly unknown[] | undefined;
}): boolean {
  return selection.notices !== undefined || selection.approvals.some((answer) => answer.role !== 'approver');
}

/** Each selection point's approval rounds, from the job's answers and its review, in the order answered. */
export function selectionRounds(job: {
  answers?: SelectionAnswer[] | undefined;
  review?: ReviewState | undefined;
  pastReviews?: ReviewState[] | undefined;
  pending?: { step: string; options: readonly { id: string; label: string }[] } | undefined;
}): SelectionRounds[] {
  const byStep = new Map<string, SelectionRounds>();
  const groupOf = (step: string) => {
    const group = byStep.get(step) ?? { step, approvals: [] };
    byStep.set(step, group);
    return group;
  };
  for (const answer of job.answers ?? []) {
    const group = groupOf(answer.step);
    const previous = group.approvals.at(-1);
    const afterFirst = previous !== undefined && previous.applied === false;
    const round = afterFirst ? previous.round + 1 : 1;
    const role: ApprovalRole =
      answer.via === 'timeout'
        ? 'default at timeout'
        : answer.applied === false
          ? 'first approver'
          : afterFirst
            ? 'second approver'
            : 'approver';
    const labels = answerLabels(answer, job.pending);
    group.approvals.push({ ...answer, ...(labels ? { labels } : {}), round, role });
  }
  for (const review of [...(job.pastReviews ?? []), ...(job.review ? [job.review] : [])]) {
    const group = groupOf(review.step);
    const notices: NonNullable<SelectionRounds['notices']> = review.rounds.map((round) => ({
      ...round,
      label:
        round.kind === 'approval'
          ? 'call for the second approval'
          : round.kind === 'timeout'
            ? 'notice of the default taken'
            : round.round === 1
              ? 'notice'
              : 'reminder',
    }));
    // The same step offered again (a job run anew) adds its rounds to the step's.
    group.notices = [...(group.notices ?? []), ...notices];
    if (review.timeoutAt !== undefined) {
      const labels = timeoutLabels(review, job.pending);
      group.timeout = { at: review.timeoutAt, answer: review.timeoutAnswer, ...(labels ? { labels } : {}) };
    }
  }
  return [...byStep.values()];
}

const isoOf = (ms: number): string => new Date(ms).toISOString();

/** One selection point's rounds as the job API and `opflow status --json` show them. */
export interface SelectionRoundsView {
  step: string;
  approvals: (Omit<SelectionRounds['approvals'][number], 'at'> & { at: string })[];
  notices?:
    | {
        round: number;
        label: NonNullable<SelectionRounds['notices']>[number]['label'];
        deliveries: (Omit<NoticeDelivery, 'at'> & { at: string })[];
      }[]
    | undefined;
  timeout?: { at: string; answer?: string[]; labels?: string[] } | undefined;
}

/**
 * Each selection point's approval rounds as a caller sees them: times in ISO 8601 (UTC), no claim
 * bookkeeping. Empty when nobody was asked or answered.
 */
export function selectionRoundsView(job: {
  answers?: SelectionAnswer[] | undefined;
  review?: ReviewState | undefined;
  pastReviews?: ReviewState[] | undefined;
  pending?: { step: string; options: readonly { id: string; label: string }[] } | undefined;
}): SelectionRoundsView[] {
  return selectionRounds(job).map((selection) => ({
    step: selection.step,
    approvals: selection.approvals.map((answer) => ({ ...answer, at: isoOf(answer.at) })),
    notices: selection.notices?.map((round) => ({
      round: round.round,
      label: round.label,
      deliveries: round.deliveries.map((delivery) => ({ ...delivery, at: isoOf(delivery.at) })),
    })),
    timeout: selection.timeout && {
      at: isoOf(selection.timeout.at),
      ...(selection.timeout.answer ? { answer: selection.timeout.answer } : {}),
      ...(selection.timeout.labels ? { labels: selection.timeout.labels } : {}),
    },
  }));
}
