/**
 * What a job keeps about its callback (`callbackUrl`): every attempt, the state of the delivery and
 * when the next attempt is due. Written only by the callback sender (shared/callbacks/sender.ts)
 * and by `opflow callbacks resend`.
 */

export const callbackStates = ['pending', 'delivered', 'gone', 'refused', 'exhausted'] as const;
/**
 * pending: waiting for the job to end, or for the next attempt; delivered: a 2xx answer; gone: the
 * receiver answered 410 (it wants no more); refused: the URL failed the SSRF guard; exhausted: every
 * attempt of the retry schedule failed (`opflow callbacks resend` starts a new round).
 */
export type CallbackState = (typeof callbackStates)[number];

export interface CallbackAttempt {
  /** Which round of delivery (1, then one more per resend). */
  round: number;
  at: number;
  /** The receiver's HTTP status, when it answered. */
  status?: number | undefined;
  /** Why there was no answer (connection, timeout, refused URL); never the URL's path or query. */
  error?: string | undefined;
  retryAfterMs?: number | undefined;
  durationMs: number;
}

export interface CallbackDelivery {
  state: CallbackState;
  round: number;
  /** The `webhook-id` of this round: the same for each of its attempts. */
  messageId: string;
  attempts: CallbackAttempt[];
  nextAttemptAt?: number | undefined;
  deliveredAt?: number | undefined;
}

/** The URL as shown to people: scheme, host and path; the query (which may carry a token) elided. */
export function shownCallbackUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}${url.search ? '?…' : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

/** A retried job's callback: a new round (new `webhook-id`) for the new run's end, history kept. */
export function callbackForNewRun(job: {
  id: string;
  callbackUrl?: string | undefined;
  callback?: CallbackDelivery | undefined;
}): CallbackDelivery | undefined {
  if (!job.callbackUrl || !job.callback) return job.callback;
  const round = job.callback.round + 1;
  return { state: 'pending', round, messageId: `msg_${job.id}_${round}`, attempts: job.callback.attempts };
}
