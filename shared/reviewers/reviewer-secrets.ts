/**
 * Where the reviewers' secrets come from: the key links are signed with, each channel's URL (a
 * Slack or Teams incoming webhook URL is itself a secret) and signing secret, and the SMTP server
 * (`smtp://user:password@host:port`). Locally from the environment; on aws from Secrets Manager
 * (runtime/aws). None is ever logged or put in an error: a problem names the variable, not the value.
 */
import { signingKey } from '../config/signing-secrets';

export interface ReviewerSecrets {
  /** The key links are signed with (at least 24 bytes). */
  linkKey(): Promise<Buffer>;
  /** The URL a Slack, Teams or webhook channel posts to. */
  channelUrl(channel: string): Promise<string | undefined>;
  /** The Standard Webhooks secret of a webhook channel. */
  channelSecret(channel: string): Promise<string | undefined>;
  /** The SMTP server, as a URL with its credentials. */
  smtpUrl(): Promise<string | undefined>;
}

export const reviewLinkSecretVariable = 'OPFLOW_REVIEW_LINK_SECRET';
/** aws: the prefix of the reviewers' secrets in Secrets Manager (the stack sets it); unset, no reviewers. */
export const reviewSecretPrefixVariable = 'OPFLOW_REVIEW_SECRET_PREFIX';
export const smtpUrlVariable = 'OPFLOW_SMTP_URL';

/** `OPFLOW_REVIEW_<CHANNEL>_URL` / `_SECRET`: upper case, `_` for `-`. */
export function channelVariable(channel: string, part: 'URL' | 'SECRET'): string {
  return `OPFLOW_REVIEW_${channel.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_${part}`;
}

/** A secret that is missing or unusable, naming where it is expected. */
export class ReviewerSecretError extends Error {
  override readonly name = 'ReviewerSecretError';
}

/** The secrets from the environment (the local backend, or a shell). */
export function envReviewerSecrets(env: Readonly<Record<string, string | undefined>>): ReviewerSecrets {
  const value = (name: string) => env[name]?.trim() || undefined;
  return {
    async linkKey() {
      const raw = value(reviewLinkSecretVariable);
      if (raw === undefined)
        throw new ReviewerSecretError(
          `${reviewLinkSecretVariable} is not set: links to the confirmation page are signed with it (e.g. whsec_$(openssl rand -base64 32))`,
        );
      return signingKey(raw, reviewLinkSecretVariable);
    },
    channelUrl: async (channel) => value(channelVariable(channel, 'URL')),
    channelSecret: async (channel) => value(channelVariable(channel, 'SECRET')),
    smtpUrl: async () => value(smtpUrlVariable),
  };
}
