/**
 * How `opflow status` shows a job's callback: where it goes (no query string, which may hold a
 * token) and every attempt.
 */
import { shownCallbackUrl } from '../engine/callback-record';
import type { Job } from '../engine/job-record';
import { printable } from './format';

const iso = (ms: number) => new Date(ms).toISOString();

/** Lines about the callback of a job, or none when it has none. */
export function describeCallback(job: Job): string[] {
  if (!job.callbackUrl) return [];
  const delivery = job.callback;
  const state = !delivery
    ? job.status === 'SUCCEEDED' || job.status === 'FAILED' || job.status === 'CANCELLED'
      ? 'about to be sent'
      : 'sent when the job ends'
    : delivery.state === 'pending'
      ? `pending (round ${delivery.round}${delivery.nextAttemptAt === undefined ? '' : `, next attempt ${iso(delivery.nextAttemptAt)}`})`
      : delivery.state === 'exhausted'
        ? 'exhausted (every retry failed; opflow callbacks resend <jobId> sends it again)'
        : delivery.state === 'gone'
          ? 'gone (the receiver answered 410; no more attempts)'
          : delivery.state === 'refused'
            ? 'refused (the URL failed the SSRF guard)'
            : `delivered ${delivery.deliveredAt === undefined ? '' : iso(delivery.deliveredAt)}`.trim();
  const lines = [`Callback: ${printable(shownCallbackUrl(job.callbackUrl))}: ${state}`];
  for (const attempt of delivery?.attempts ?? []) {
    const what =
      attempt.status !== undefined
        ? `HTTP ${attempt.status}`
        : `no answer: ${printable(attempt.error ?? 'unknown')}`;
    const retry =
      attempt.retryAfterMs === undefined ? '' : `, Retry-After ${Math.round(attempt.retryAfterMs / 1000)} s`;
    lines.push(`  ${iso(attempt.at)}  round ${attempt.round}  ${what}${retry} (${attempt.durationMs} ms)`);
  }
  return lines;
}
