/**
 * The confirmation page a notice's link opens: `GET /review/{token}` shows the question and its
 * options in a form and answers nothing (mail scanners and chat previews follow links);
 * `POST /review/{token}` (the form) gives the answer, recorded `via: link` with the recipient's
 * mail address, or the name typed in the form for a link posted to a channel. Framework-free: a
 * request in, an HTML answer out, for `opflow serve` and the Lambda api alike.
 *
 * The token is the page's credential, so the answers keep it out of everything that could carry it
 * on: `Referrer-Policy: no-referrer`, `Cache-Control: no-store`, a CSP that allows no script, no
 * frame and forms to this origin only. A POST must also carry the form's nonce (its hidden field and
 * its cookie, review-form-nonce.ts): one without is refused and shown a fresh form, answering nothing.
 */

import type { JobDeps } from '../engine/deps';
import { answerSelection, JobRequestError } from '../engine/job-commands';
import type { Job, PendingSelection } from '../engine/job-record';
import {
  answerLabels,
  choiceText,
  labelsOf,
  openConfirmations,
  reviewOfOffer,
  timeoutLabels,
} from '../engine/review-record';
import type { HttpAnswer } from '../http/api-error';
import { checkFormNonce, type FormNonceProblem, formFieldName, issueFormNonce } from './review-form-nonce';
import { type ReviewLinkClaims, ReviewLinkError, verifyReviewLink } from './review-link';

export const reviewPathPattern = /^\/review\/([\w.-]{1,2048})$/;

export interface ReviewRequest {
  method: string;
  token: string;
  /** The form body (application/x-www-form-urlencoded) of a POST. */
  body?: string | undefined;
  /** The request's `Cookie` header (the form's nonce). */
  cookie?: string | undefined;
  /** The page is served over https: its cookie is `Secure`. */
  secure?: boolean | undefined;
}

const headers = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
};

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The dashboard's look (dashboard/style.css): its colours, a card on a grey page, the same focus ring. */
const style = `body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f4f6f8}
header{background:#14213d;color:#fff;padding:.7rem 1.25rem;font-weight:700;letter-spacing:.01em}header span{font-weight:400;opacity:.8;margin-left:.5rem}
main{max-width:42rem;margin:2rem auto;padding:1.5rem 1.75rem;background:#fff;border:1px solid #d8dee4;border-radius:10px;box-shadow:0 1px 2px rgba(20,33,61,.06)}
h1{font-size:1.35rem;line-height:1.3;margin:0 0 .75rem}code{font-size:.85rem;background:#eceff3;padding:.05rem .3rem;border-radius:4px}
fieldset{border:1px solid #d8dee4;border-radius:8px;padding:.75rem 1rem 1rem;margin:1rem 0}legend{font-weight:600;padding:0 .3rem}
.option{display:flex;gap:.6rem;align-items:flex-start;margin:.35rem 0;padding:.5rem .6rem;border-radius:6px}.option:hover{background:#f4f6f8}
.option input{margin-top:.3rem}.detail{color:#57606a;font-size:.88rem}
.note{background:#e8eefc;border-left:4px solid #2450c8;padding:.6rem .9rem;border-radius:4px}.error{background:#fdecea;border-left:4px solid #b42318;padding:.6rem .9rem;border-radius:4px}
label.name{display:block;margin-top:1rem;font-weight:600}input[type=text]{font:inherit;padding:.4rem .5rem;width:100%;max-width:24rem;border:1px solid #8c959f;border-radius:6px}
button{display:block;font:inherit;font-weight:600;margin-top:1rem;padding:.55rem 1.3rem;background:#2450c8;color:#fff;border:0;border-radius:6px;cursor:pointer}button:hover{background:#1c3fa0}
button:focus-visible,input:focus-visible{outline:3px solid #f2a900;outline-offset:2px}`;

function page(status: number, title: string, body: string): HttpAnswer {
  return {
    status,
    headers,
    body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)} · opflow</title><style>${style}</style></head><body><header>opflow<span>review</span></header><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`,
  };
}

const timeFormat = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  dateStyle: 'medium',
  timeStyle: 'short',
});
/** A moment as a reviewer reads it, in UTC: "28 Nov 2026, 09:14 UTC". */
const readableTime = (at: number) => `${timeFormat.format(new Date(at))} UTC`;

const linkStatus = { malformed: 400, tampered: 403, expired: 410 } as const;

/** The recipient's mail address, when the link was sent to a person; undefined for a channel's link. */
const personOf = (claims: ReviewLinkClaims) =>
  claims.recipient.startsWith('channel:') ? undefined : claims.recipient;

function form(
  job: Job,
  pending: PendingSelection,
  claims: ReviewLinkClaims,
  nonceField: string,
  problem?: string,
  chosen?: readonly string[],
  typedBy?: string,
): string {
  const single = pending.max === 1;
  const first = openConfirmations(job).at(-1);
  // Ticked: what this browser sent, else what the first approver chose (to confirm), else the suggested.
  const picked = new Set(
    chosen ?? first?.options ?? pending.options.filter((o) => o.preselected).map((o) => o.id),
  );
  const range = pending.min === pending.max ? `${pending.min}` : `${pending.min} to ${pending.max}`;
  const review = reviewOfOffer(job.review, pending) ? job.review : undefined;
  const approvals = review?.approvals ?? 1;
  const person = personOf(claims);
  const timeout =
    review?.timeoutAt !== undefined && review.timeoutAnswer
      ? `<p class="detail">Without an answer by ${readableTime(review.timeoutAt)}, the default is taken: ${escapeHtml(
          choiceText({ options: review.timeoutAnswer, labels: timeoutLabels(review, pending) }) || 'none',
        )}.</p>`
      : '';
  const options = pending.options
    .map(
      (
        option,
        index,
      ) => `<div class="option"><input type="${single ? 'radio' : 'checkbox'}" name="option" id="option-${index}" value="${escapeHtml(option.id)}"${picked.has(option.id) ? ' checked' : ''}>
<label for="option-${index}">${escapeHtml(option.label)}${option.preselected ? ' <em>(suggested)</em>' : ''}${option.detail ? `<br><span class="detail">${escapeHtml(option.detail)}</span>` : ''}</label></div>`,
    )
    .join('\n');
  return `<p>${escapeHtml(job.label ?? job.workflow)}: job <code>${escapeHtml(job.id)}</code> (${escapeHtml(job.workflow)}, tenant ${escapeHtml(job.tenant)}).</p>
${problem ? `<p class="error" role="alert">${escapeHtml(problem)}</p>` : ''}
${first ? `<p class="note">${escapeHtml(first.by ?? 'Someone')} chose ${escapeHtml(choiceText({ options: first.options, labels: answerLabels(first, pending) }))}. A second person must confirm the same choice.</p>` : approvals > 1 ? '<p class="note">Two people must confirm the same choice.</p>' : ''}
<form method="post">
<input type="hidden" name="${formFieldName}" value="${escapeHtml(nonceField)}">
<fieldset><legend>${escapeHtml(pending.prompt)}</legend><p class="detail">Choose ${range} of ${pending.options.length}.</p>
${options}
</fieldset>
${person ? `<p>You answer as <strong>${escapeHtml(person)}</strong>.</p>` : `<label class="name" for="by">Your name or mail address (kept with the answer)</label><input type="text" id="by" name="by" required maxlength="200" autocomplete="email"${typedBy ? ` value="${escapeHtml(typedBy.slice(0, 200))}"` : ''}>`}
<button type="submit">Confirm this answer</button>
</form>
${timeout}<p class="detail">This link works until ${readableTime(claims.expiresAt)}. Opening it answered nothing; only the button does.</p>`;
}

/** Where a job is now, as the closed page says it to a reviewer (never a status code). */
const whereNow: Record<Job['status'], string> = {
  QUEUED: 'it has gone on',
  RUNNING: 'it has gone on',
  WAITING: 'it has gone on',
  AWAITING_INPUT: 'it now waits for another selection',
  SUCCEEDED: 'it has finished',
  FAILED: 'it has failed',
  CANCELLED: 'it was cancelled',
};

function closed(job: Job, claims: ReviewLinkClaims): HttpAnswer {
  const answer = [...(job.answers ?? [])]
    .reverse()
    .find((a) => a.step === claims.step && a.applied !== false);
  const who = answer
    ? ` It was answered ${answer.by ? `by ${escapeHtml(answer.by)} ` : ''}via ${answer.via} on ${readableTime(answer.at)}: ${escapeHtml(choiceText({ options: answer.options, labels: answerLabels(answer, job.pending) }))}.`
    : '';
  return page(
    409,
    'This question is closed',
    `<p>Job <code>${escapeHtml(job.id)}</code> no longer waits for this selection: ${whereNow[job.status]}.${who}</p>`,
  );
}

/** Why a POST's form is refused, said to the reviewer; nothing was answered. */
const nonceProblems: Record<FormNonceProblem, string> = {
  missing:
    'Nothing was recorded: this answer did not come from the form as this browser opened it (the page needs its cookie). Check the choice below and confirm again.',
  expired:
    'Nothing was recorded: this form was opened more than 2 hours ago. Check the choice below and confirm again.',
  mismatch:
    'Nothing was recorded: this form does not belong to this link in this browser. Check the choice below and confirm again.',
};

/** A page that shows the form with a fresh nonce (its hidden field, and its cookie set). */
function formPage(
  status: number,
  job: Job,
  pending: PendingSelection,
  claims: ReviewLinkClaims,
  context: { key: Buffer; now: number; request: ReviewRequest },
  problem?: string,
  chosen?: readonly string[],
  typedBy?: string,
): HttpAnswer {
  const { key, now, request } = context;
  const issued = issueFormNonce(request.token, key, now, { secure: request.secure === true });
  const answer = page(
    status,
    pending.prompt,
    form(job, pending, claims, issued.field, problem, chosen, typedBy),
  );
  return { ...answer, headers: { ...answer.headers, 'set-cookie': issued.setCookie } };
}

/** What a POST's answer does to a waiting job; `again` when a commit came between and it is read anew. */
async function answerForm(
  deps: JobDeps,
  job: Job,
  pending: PendingSelection,
  claims: ReviewLinkClaims,
  context: { key: Buffer; now: number; request: ReviewRequest },
  lastTry: boolean,
): Promise<HttpAnswer | 'again'> {
  const fields = new URLSearchParams(context.request.body ?? '');
  const chosen = fields.getAll('option');
  // A refused form keeps the name typed in it.
  const typedBy = fields.get('by') ?? undefined;
  const refused = checkFormNonce(
    context.request.token,
    context.key,
    context.now,
    fields.get(formFieldName),
    context.request.cookie,
  );
  if (refused) return formPage(403, job, pending, claims, context, nonceProblems[refused], chosen, typedBy);
  const by = personOf(claims) ?? fields.get('by')?.trim();
  if (!by)
    return formPage(
      400,
      job,
      pending,
      claims,
      context,
      'Say who you are: your name or mail address is kept with the answer.',
      chosen,
    );
  try {
    const answered = await answerSelection(
      deps,
      job.id,
      chosen,
      { via: 'link', by: by.slice(0, 200) },
      { expectVersion: job.version },
    );
    if (answered.status === 'AWAITING_INPUT')
      return page(
        200,
        'Your confirmation is recorded',
        `<p>You chose ${escapeHtml(choiceText({ options: chosen, labels: labelsOf(chosen, pending.options) }))}. A second person must confirm the same choice; they were told in the notices.</p>`,
      );
    return page(
      200,
      'Thank you: your answer is recorded',
      `<p>You chose ${escapeHtml(choiceText({ options: chosen, labels: labelsOf(chosen, pending.options) }))}. Job <code>${escapeHtml(job.id)}</code> goes on.</p>`,
    );
  } catch (error) {
    if (!(error instanceof JobRequestError)) throw error;
    const changed = (await deps.store.get(job.id))?.version !== job.version;
    if (error.reason === 'conflict' && changed && !lastTry) return 'again';
    const status = error.reason === 'conflict' ? 409 : 400;
    return formPage(status, job, pending, claims, context, error.message, chosen, typedBy);
  }
}

/** Answers `GET` or `POST /review/{token}`; never throws for a bad link or a refused answer. */
export async function answerReviewPage(
  deps: JobDeps,
  key: Buffer,
  request: ReviewRequest,
): Promise<HttpAnswer> {
  const now = deps.clock.now();
  let claims: ReviewLinkClaims;
  try {
    claims = verifyReviewLink(request.token, key, now);
  } catch (error) {
    if (!(error instanceof ReviewLinkError)) throw error;
    return page(
      linkStatus[error.problem],
      error.problem === 'expired' ? 'This link has expired' : 'This link cannot be used',
      `<p class="error">${escapeHtml(error.message)}</p>`,
    );
  }
  const context = { key, now, request };
  // The job is read again when a commit of the reviewers' pass comes between (a notice recorded).
  for (let tries = 0; ; tries++) {
    const job = await deps.store.get(claims.jobId);
    if (!job)
      return page(404, 'No such job', '<p>The job of this link is gone (deleted after its retention).</p>');
    const pending = job.pending;
    if (
      job.status !== 'AWAITING_INPUT' ||
      !pending ||
      pending.step !== claims.step ||
      pending.offeredAt !== claims.offeredAt
    )
      return closed(job, claims);
    if (request.method === 'GET' || request.method === 'HEAD')
      return formPage(200, job, pending, claims, context);
    if (request.method !== 'POST')
      return {
        ...page(405, 'Not supported', '<p>Use the form.</p>'),
        headers: { ...headers, allow: 'GET, POST' },
      };
    const answer = await answerForm(deps, job, pending, claims, context, tries >= 3);
    if (answer !== 'again') return answer;
  }
}
