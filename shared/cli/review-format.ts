/**
 * The lines of `opflow status` about a job's answers and its reviewers: who answered each
 * selection point, when and how, a first approval waiting for a second person, and the notices sent.
 */
import type { Job } from '../engine/job-record';
import { reviewOfOffer } from '../engine/review-record';
import { printable } from './format';

const iso = (ms: number) => new Date(ms).toISOString();

/** `answered  f1,f3 at … by alice@example.com via link`, one line per answer; then the review's state. */
export function describeReview(job: Job): string[] {
  const lines: string[] = [];
  for (const answer of job.answers ?? []) {
    const who = answer.by === undefined ? '' : ` by ${printable(answer.by)}`;
    const what = `${printable(answer.options.join(','))} at ${iso(answer.at)}${who} via ${answer.via}`;
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
