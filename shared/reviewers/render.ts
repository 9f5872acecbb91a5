/**
 * A notice of a selection awaited, as each channel wants it: a Slack message (Block Kit, a button
 * to the link), a Teams message (an Adaptive Card with an Open URL action), a mail (plain text and
 * HTML) and the generic webhook's JSON. Every text that comes from outside (labels, prompts,
 * options) is escaped for the channel's markup.
 */
import type { SelectionOption } from '../engine/job-record';

export interface Notice {
  jobId: string;
  workflow: string;
  tenant: string;
  label?: string | undefined;
  prompt: string;
  options: SelectionOption[];
  min: number;
  max: number;
  /** 1: the first notice; more: a reminder, or (`secondApproval`) the call for the second approver. */
  round: number;
  /** Sent because a first approver confirmed: the others are asked for the second confirmation. */
  secondApproval?: boolean | undefined;
  /** The confirmation page of this recipient (a signed link). */
  link: string;
  linkExpiresAt: number;
  /** When the default answer is taken, and what it is, in words. */
  timeout?: { at: number; answer: string } | undefined;
  approvals: number;
  /** A first approval waiting for a second person. */
  firstApproval?: { by?: string | undefined; options: string[] } | undefined;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The subject line (also the first line of chat messages). */
export function noticeTitle(notice: Notice): string {
  const what = notice.label ?? notice.workflow;
  if (notice.secondApproval && notice.firstApproval)
    return `${what}: ${notice.firstApproval.by ?? 'someone'} approved; your confirmation is wanted`;
  return `${notice.round > 1 ? 'Reminder: ' : ''}${what} waits for your selection`;
}

/** What is asked, in plain sentences (one per line). */
function noticeLines(notice: Notice): string[] {
  const range = notice.min === notice.max ? `${notice.min}` : `${notice.min} to ${notice.max}`;
  return [
    `${notice.prompt} (choose ${range} of ${notice.options.length}).`,
    ...(notice.firstApproval
      ? [
          `${notice.firstApproval.by ?? 'Someone'} chose ${notice.firstApproval.options.join(', ')}; a second person must confirm.`,
        ]
      : notice.approvals > 1
        ? ['Two people must confirm the same choice.']
        : []),
    ...(notice.timeout
      ? [`Without an answer by ${iso(notice.timeout.at)}, ${notice.timeout.answer} is taken.`]
      : []),
    `The link works until ${iso(notice.linkExpiresAt)}. Job ${notice.jobId} (${notice.workflow}, tenant ${notice.tenant}).`,
  ];
}

const optionLine = (option: SelectionOption) =>
  `${option.label}${option.preselected ? ' (suggested)' : ''}${option.detail ? ` - ${option.detail}` : ''}`;

/** Slack's mrkdwn: &, < and > escaped (everything else is shown as written). */
function slackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The body of a Slack incoming webhook: a fallback text and blocks with a button to the link. */
export function slackMessage(notice: Notice): Record<string, unknown> {
  const options = notice.options.map((option) => `• ${slackText(optionLine(option))}`).join('\n');
  return {
    text: `${slackText(noticeTitle(notice))}: ${notice.link}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: noticeTitle(notice).slice(0, 150) } },
      {
        type: 'section',
        text: { type: 'mrkdwn', text: slackText(noticeLines(notice).join('\n')).slice(0, 3000) },
      },
      { type: 'section', text: { type: 'mrkdwn', text: options.slice(0, 3000) || '-' } },
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            text: { type: 'plain_text', text: 'Review and answer' },
            url: notice.link,
            style: 'primary',
          },
        ],
      },
    ],
  };
}

/** The body of a Teams incoming webhook (Workflows or connector): one Adaptive Card. */
export function teamsMessage(notice: Notice): Record<string, unknown> {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: noticeTitle(notice), weight: 'Bolder', size: 'Medium', wrap: true },
            ...noticeLines(notice).map((text) => ({ type: 'TextBlock', text, wrap: true })),
            {
              type: 'FactSet',
              facts: notice.options.map((option) => ({ title: option.id, value: optionLine(option) })),
            },
          ],
          actions: [{ type: 'Action.OpenUrl', title: 'Review and answer', url: notice.link }],
        },
      },
    ],
  };
}

function htmlText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A mail: subject, plain text and HTML, the link in both. */
export function mailMessage(notice: Notice): { subject: string; text: string; html: string } {
  const options = notice.options.map((option) => `- ${optionLine(option)}`);
  const text = [
    ...noticeLines(notice),
    '',
    ...options,
    '',
    `Review and answer: ${notice.link}`,
    '',
    'Opening the link answers nothing: the page asks you to confirm.',
  ].join('\n');
  const html = `<!doctype html><html><body style="font-family:sans-serif">
<h1 style="font-size:1.2em">${htmlText(noticeTitle(notice))}</h1>
${noticeLines(notice)
  .map((line) => `<p>${htmlText(line)}</p>`)
  .join('\n')}
<ul>${notice.options.map((option) => `<li>${htmlText(optionLine(option))}</li>`).join('')}</ul>
<p><a href="${htmlText(notice.link)}">Review and answer</a></p>
<p style="color:#555">Opening the link answers nothing: the page asks you to confirm.</p>
</body></html>`;
  return { subject: noticeTitle(notice), text, html };
}

/** The generic webhook's JSON (signed with Standard Webhooks headers by the sender). */
export function webhookNotice(notice: Notice): Record<string, unknown> {
  return {
    type: 'selection.awaiting',
    round: notice.round,
    ...(notice.secondApproval ? { secondApproval: true } : {}),
    job: { id: notice.jobId, workflow: notice.workflow, tenant: notice.tenant, label: notice.label },
    prompt: notice.prompt,
    options: notice.options,
    min: notice.min,
    max: notice.max,
    approvals: notice.approvals,
    firstApproval: notice.firstApproval,
    timeout: notice.timeout && {
      at: new Date(notice.timeout.at).toISOString(),
      answer: notice.timeout.answer,
    },
    link: { url: notice.link, expiresAt: new Date(notice.linkExpiresAt).toISOString() },
  };
}
