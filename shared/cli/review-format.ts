/**
 * The lines of `opflow status` about a job's answers and its reviewers: who answered each
 * selection point, when and how, a first approval waiting for a second person, and the notices sent;
 * then each selection point's approval rounds on one line (`describeRounds`).
 */
import type { Job } from '../engine/job-record';
import { answerLabels, choiceText, hadRounds, reviewOfOffer, selectionRounds } from '../engine/review-record';
import { printable } from './format';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * `answered  Keep claim 3 as drafted (f1), Drop claim 5 (f3) at … by alice@example.com via link`,
 * one line per answer (the option's id alone where its label is not known); then the review's state.
 */
export function describeReview(job: Job): string[] {
  const lines: string[] = [];
  for (const answer of job.answers ?? []) {
    const who = answer.by === undefined ? '' : ` by ${printable(answer.by)}`;
    const chose = choiceText({ options: answer.options, labels: answerLabels(answer, job.pending) });
    const what = `${printable(chose)} at ${iso(answer.at)}${who} via ${answer.via}`;
    lines.push(
      answer.applied === false
        ? `approval  ${what} (step ${answer.step}; a second person must confirm)`
        : `answered  ${what} (step ${answer.step})`,
    );
  }
  const review = job.review;
  if (review && reviewOfOffer(review, job.pending)) {
    for (const round of review.rounds) {
      const deliveries = round.deliveries
        .map((d) => `${d.channel} ${d.state}${d.error ? ` (${printable(d.error)})` : ''}`)
        .join(', ');
      const why = round.kind === 'approval' ? ' (the call for the second approval)' : '';
      lines.push(`notified  round ${round.round}${why}: ${deliveries || 'sending'}`);
    }
    const next = [
      review.approvals > 1 ? `${review.approvals} approvers must confirm` : undefined,
      review.nextNoticeAt !== undefined ? `next reminder ${iso(review.nextNoticeAt)}` : undefined,
      review.timeoutAt !== undefined ? `default answer at ${iso(review.timeoutAt)}` : undefined,
    ].filter((part) => part !== undefined);
    lines.push(`reviewers rule ${printable(review.rule)}${next.length > 0 ? `; ${next.join('; ')}` : ''}`);
  }
  return lines;
}

/** `2 reminders` for a count of a notice label (`notice`, `reminder`, ...). */
function counted(label: string, count: number): string {
  if (count === 1) return label;
  return `${count} ${label.replace(/^(\w+)/, '$1s')}`;
}

/**
 * One line per selection point that had approval rounds (`hadRounds`: notices, two approvers, a timeout):
 * `rounds    step recommend: 1 first approver alice via cli at …, 2 second approver bob via api at …;
 * sent notice, call for the second approval, reminder; default alpha (r1), beta (r2) at …`.
 */
export function describeRounds(job: Job): string[] {
  return selectionRounds(job)
    .filter(hadRounds)
    .map((selection) => {
      const approvals = selection.approvals.map(
        (answer) =>
          `${answer.round} ${answer.role}${answer.by === undefined ? '' : ` ${printable(answer.by)}`} via ${answer.via} at ${iso(answer.at)}`,
      );
      const labels = new Map<string, number>();
      for (const notice of selection.notices ?? [])
        labels.set(notice.label, (labels.get(notice.label) ?? 0) + 1);
      const parts = [
        approvals.length > 0 ? approvals.join(', ') : 'no answer yet',
        labels.size > 0
          ? `sent ${[...labels].map(([label, count]) => counted(label, count)).join(', ')}`
          : undefined,
        selection.timeout
          ? `default ${printable(choiceText({ options: selection.timeout.answer ?? [], labels: selection.timeout.labels })) || 'answer'} at ${iso(selection.timeout.at)}`
          : undefined,
      ].filter((part) => part !== undefined);
      return `rounds    step ${printable(selection.step)}: ${parts.join('; ')}`;
    });
}
