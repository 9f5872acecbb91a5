/**
 * A notice of a selection awaited, as each channel wants it: a Slack message (Block Kit, a button
 * to the link), a Teams message (an Adaptive Card with an Open URL action), a mail (plain text and
 * HTML) and the generic webhook's JSON. An option is named by its label, its id beside it (what
 * `opflow resume --select` and the job API take): `Keep claim 3 (f1)`. Every text that comes from
 * outside (labels, prompts, options, a reviewer's name) is escaped for the channel's markup: Slack's
 * mrkdwn (`&`, `<`, `>`, so no `<!channel>` or link forms), an Adaptive Card's Markdown (its
 * emphasis, link and list marks, `<` and `&`), HTML mail as HTML; the plain-text mail keeps it as is.
 */
import type { SelectionOption } from '../engine/job-record';
import { choiceText } from '../engine/review-record';

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
  /**
   * When the default answer is taken, and what it is: in words, each option by its label
   * (`the suggested options are taken: Keep claim 3 (f1)`), and its option ids.
   */
  timeout?: { at: number; answer: string; options?: string[] | undefined } | undefined;
  approvals: number;
  /** A first approval waiting for a second person: who, the option ids and their labels (same order). */
  firstApproval?: { by?: string | undefined; options: string[]; labels?: string[] | undefined } | undefined;
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
          `${notice.firstApproval.by ?? 'Someone'} chose ${choiceText(notice.firstApproval)}; a second person must confirm.`,
        ]
      : notice.approvals > 1
        ? ['Two people must confirm the same choice.']
        : []),
    ...(notice.timeout ? [`Without an answer by ${iso(notice.timeout.at)}, ${notice.timeout.answer}.`] : []),
    `The link works until ${iso(notice.linkExpiresAt)}. Job ${notice.jobId} (${notice.workflow}, tenant ${notice.tenant}).`,
  ];
}

/** An option as a reviewer reads it: `Keep claim 3 (f1), suggested - its detail`. */
const optionLine = (option: SelectionOption) =>
  `${choiceText({ options: [option.id], labels: [option.label] })}${option.preselected ? ', suggested' : ''}${option.detail ? ` - ${option.detail}` : ''}`;

/** An option's line on a Teams card, where the fact's title is its id: `Keep claim 3, suggested - its detail`. */
const optionValue = (option: SelectionOption) =>
  `${option.label}${option.preselected ? ', suggested' : ''}${option.detail ? ` - ${option.detail}` : ''}`;

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

/**
 * Text for an Adaptive Card's Markdown (TextBlock and FactSet): the marks of emphasis, links and
 * code backslash-escaped, a line's list mark too, `&` and `<` as entities (no HTML, mention or
 * entity forms), so a label reads as written and links nowhere.
 */
export function teamsText(text: string): string {
  return text
    .replace(/[\\`*_[\]]/g, (mark) => `\\${mark}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/^(\s*)([-+]|\d+\.)(?=\s)/gm, (_all, space: string, mark: string) => `${space}\\${mark}`);
}

/**
 * A Teams message of one Adaptive Card: `title` in bold, each of `lines` a text block (both escaped
 * for Teams), then `more` blocks; `actions` when the card has any.
 */
function teamsCard(
  title: string,
  lines: readonly string[],
  more: readonly Record<string, unknown>[] = [],
  actions?: readonly Record<string, unknown>[],
): Record<string, unknown> {
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
            { type: 'TextBlock', text: teamsText(title), weight: 'Bolder', size: 'Medium', wrap: true },
            ...lines.map((text) => ({ type: 'TextBlock', text: teamsText(text), wrap: true })),
            ...more,
          ],
          ...(actions === undefined ? {} : { actions }),
        },
      },
    ],
  };
}

/** The body of a Teams incoming webhook (Workflows or connector): one Adaptive Card. */
export function teamsMessage(notice: Notice): Record<string, unknown> {
  return teamsCard(
    noticeTitle(notice),
    noticeLines(notice),
    [
      {
        type: 'FactSet',
        facts: notice.options.map((option) => ({
          title: teamsText(option.id),
          value: teamsText(optionValue(option)),
        })),
      },
    ],
    [{ type: 'Action.OpenUrl', title: 'Review and answer', url: notice.link }],
  );
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
    firstApproval: notice.firstApproval && {
      by: notice.firstApproval.by,
      options: notice.firstApproval.options,
    },
    timeout: notice.timeout && {
      at: new Date(notice.timeout.at).toISOString(),
      answer: notice.timeout.answer,
      ...(notice.timeout.options ? { options: notice.timeout.options } : {}),
    },
    link: { url: notice.link, expiresAt: new Date(notice.linkExpiresAt).toISOString() },
  };
}

/**
 * The notice that a selection's timeout took its configured default answer: who was asked learns
 * what was taken, when, and after how long. Nothing is asked: it has no link.
 */
export interface DefaultTakenNotice {
  kind: 'default-taken';
  jobId: string;
  workflow: string;
  tenant: string;
  label?: string | undefined;
  prompt: string;
  /** The option ids taken and their labels (same order). */
  options: string[];
  labels: string[];
  /** When the default was taken. */
  at: number;
  /** The rule's `timeout.after`, as configured (`2d`). */
  after: string;
}

/** The title of the default-taken notice (a mail's subject, a chat message's first line). */
export function defaultTakenTitle(notice: DefaultTakenNotice): string {
  return `${notice.label ?? notice.workflow}: nobody answered in time; the default answer was taken`;
}

function defaultTakenLines(notice: DefaultTakenNotice): string[] {
  const chosen = choiceText({ options: notice.options, labels: notice.labels }) || 'none';
  return [
    `${notice.prompt}`,
    `The default answer ${chosen} was taken at ${iso(notice.at)} after ${notice.after} without an answer.`,
    `Nothing more is asked: the job goes on. Job ${notice.jobId} (${notice.workflow}, tenant ${notice.tenant}).`,
  ];
}

/** The default-taken notice as each channel wants it: the same escaping as the notices, and no link or button. */
export function defaultTakenBody(
  type: 'slack' | 'teams' | 'webhook',
  notice: DefaultTakenNotice,
): Record<string, unknown> {
  const title = defaultTakenTitle(notice);
  const lines = defaultTakenLines(notice);
  if (type === 'slack')
    return {
      text: slackText(title),
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: title.slice(0, 150) } },
        { type: 'section', text: { type: 'mrkdwn', text: slackText(lines.join('\n')).slice(0, 3000) } },
      ],
    };
  if (type === 'teams') return teamsCard(title, lines);
  return {
    type: 'selection.defaulted',
    job: { id: notice.jobId, workflow: notice.workflow, tenant: notice.tenant, label: notice.label },
    prompt: notice.prompt,
    answer: { options: notice.options, labels: notice.labels, text: lines[1] },
    at: new Date(notice.at).toISOString(),
    after: notice.after,
  };
}

/** The default-taken notice as a mail: subject, plain text and HTML, no link. */
export function defaultTakenMail(notice: DefaultTakenNotice): {
  subject: string;
  text: string;
  html: string;
} {
  const lines = defaultTakenLines(notice);
  const html = `<!doctype html><html><body style="font-family:sans-serif">
<h1 style="font-size:1.2em">${htmlText(defaultTakenTitle(notice))}</h1>
${lines.map((line) => `<p>${htmlText(line)}</p>`).join('\n')}
</body></html>`;
  return { subject: defaultTakenTitle(notice), text: lines.join('\n'), html };
}
