/**
 * One channel's delivery of a notice: a Slack, Teams or generic webhook gets one POST (through the
 * callbacks' sender: the SSRF guard, a pinned connection, one deadline; the generic webhook signed
 * with Standard Webhooks headers), a mail channel one message per address through SMTP (nodemailer),
 * each with the recipient's own link. An outcome's error never holds a URL, an address's link or a
 * credential: it is the receiver's status or the connection's error, scrubbed of the secrets used.
 */

import { sendCallback } from '../callbacks/send';
import type { CallbackUrlPolicy } from '../callbacks/ssrf-guard';
import { errorMessage } from '../errors/error-message';
import {
  type DefaultTakenNotice,
  defaultTakenBody,
  defaultTakenMail,
  mailMessage,
  type Notice,
  slackMessage,
  teamsMessage,
  webhookNotice,
} from './render';
import type { ReviewChannel } from './review-config';
import type { ReviewerSecrets } from './reviewer-secrets';

export type DeliveryOutcome = { ok: true } | { ok: false; error: string };

export interface DeliveryOptions {
  secrets: ReviewerSecrets;
  policy?: CallbackUrlPolicy | undefined;
  /**
   * The notice for a recipient (a mail address, or `channel:<name>`), with its own link; or the
   * notice that the timeout's default answer was taken (the same for all, no link).
   */
  noticeFor(recipient: string): Notice | DefaultTakenNotice;
  /** A mail recipient left out of this round (the first approver, asked for no second confirmation). */
  skip?: ((recipient: string) => boolean) | undefined;
  /** The same for every attempt of one round: webhook receivers de-duplicate on it. */
  messageId: string;
  now: number;
  /** The whole attempt of one POST or one mail. Default: 15 s. */
  deadlineMs?: number | undefined;
}

/** The recipient name of a channel that reaches a room, not a person. */
export const channelRecipient = (channel: string) => `channel:${channel}`;

/** Removes every secret in `secrets` (and its URL-decoded form) from a text. */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < 4) continue;
    for (const form of new Set([secret, safeDecode(secret)])) out = out.split(form).join('[secret]');
  }
  return out;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Delivers one channel's notice; never throws for the receiver's or the network's faults. */
export async function deliver(
  name: string,
  channel: ReviewChannel,
  options: DeliveryOptions,
): Promise<DeliveryOutcome> {
  if (channel.type === 'email') return deliverMail(channel, options);
  const url = await options.secrets.channelUrl(name);
  if (!url) return { ok: false, error: `no URL for channel ${name} (its secret is not set)` };
  const secret = channel.type === 'webhook' ? await options.secrets.channelSecret(name) : undefined;
  if (channel.type === 'webhook' && !secret)
    return { ok: false, error: `no signing secret for webhook channel ${name}` };
  const notice = options.noticeFor(channelRecipient(name));
  const body =
    'kind' in notice
      ? defaultTakenBody(channel.type, notice)
      : channel.type === 'slack'
        ? slackMessage(notice)
        : channel.type === 'teams'
          ? teamsMessage(notice)
          : webhookNotice(notice);
  const outcome = await sendCallback(
    {
      url,
      messageId: options.messageId,
      body: JSON.stringify(body),
      secret,
      timestampSeconds: Math.floor(options.now / 1000),
    },
    { policy: options.policy, deadlineMs: options.deadlineMs },
    options.now,
  );
  const secrets = [url, secret, 'link' in notice ? notice.link : undefined];
  switch (outcome.kind) {
    case 'answered':
      return outcome.status >= 200 && outcome.status < 300
        ? { ok: true }
        : { ok: false, error: `HTTP ${outcome.status}` };
    case 'interrupted':
      return { ok: false, error: 'interrupted' };
    default:
      return { ok: false, error: scrub(outcome.message, secrets).slice(0, 300) };
  }
}

async function deliverMail(
  channel: Extract<ReviewChannel, { type: 'email' }>,
  options: DeliveryOptions,
): Promise<DeliveryOutcome> {
  const smtpUrl = await options.secrets.smtpUrl();
  if (!smtpUrl) return { ok: false, error: 'no SMTP server (its secret is not set)' };
  let parsed: URL;
  try {
    parsed = new URL(smtpUrl);
  } catch {
    return { ok: false, error: 'the SMTP server setting is not a URL (smtp://user:password@host:port)' };
  }
  const { createTransport } = await import('nodemailer');
  const deadlineMs = options.deadlineMs ?? 15_000;
  const secure = parsed.protocol === 'smtps:';
  const transport = createTransport({
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : secure ? 465 : 587,
    secure,
    ...(parsed.username
      ? { auth: { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) } }
      : {}),
    connectionTimeout: deadlineMs,
    greetingTimeout: deadlineMs,
    socketTimeout: deadlineMs,
  });
  const from = channel.from ?? `opflow <opflow@${parsed.hostname || 'localhost'}>`;
  const failures: string[] = [];
  try {
    for (const to of channel.to) {
      if (options.skip?.(to)) continue;
      const notice = options.noticeFor(to);
      const message = 'kind' in notice ? defaultTakenMail(notice) : mailMessage(notice);
      try {
        await transport.sendMail({
          from,
          to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          messageId: `<${options.messageId}.${Buffer.from(to).toString('hex').slice(0, 40)}@opflow>`,
        });
      } catch (error) {
        const secrets = [
          smtpUrl,
          parsed.password,
          parsed.username,
          'link' in notice ? notice.link : undefined,
        ];
        failures.push(`${to}: ${scrub(errorMessage(error), secrets).slice(0, 200)}`);
      }
    }
  } finally {
    transport.close();
  }
  return failures.length === 0 ? { ok: true } : { ok: false, error: failures.join('; ').slice(0, 300) };
}
