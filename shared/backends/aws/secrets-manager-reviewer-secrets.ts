/**
 * The reviewers' secrets on Secrets Manager, under one prefix (`<stack prefix>/review/`):
 *
 * - `<prefix>link-key`: the key links to the confirmation page are signed with (the stack generates it);
 * - `<prefix>smtp-url`: the SMTP server, `smtp://user:password@host:port`;
 * - `<prefix>channel/<name>/url` and `<prefix>channel/<name>/secret`: a channel's webhook URL (a Slack
 *   or Teams URL is itself a secret) and a webhook channel's Standard Webhooks secret.
 *
 * Read through Powertools' SecretsProvider, cached for a bounded time (5 minutes), so a rotated
 * value needs no deploy. A problem names the secret, never its value.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SigningSecretError, signingKey } from '../../config/signing-secrets';
import { ReviewerSecretError, type ReviewerSecrets } from '../../reviewers/reviewer-secrets';
import { SecretTextReader } from './secrets-provider';

/** The names of the reviewers' secrets under `prefix`. */
export const reviewerSecretNames = {
  linkKey: (prefix: string) => `${prefix}link-key`,
  smtpUrl: (prefix: string) => `${prefix}smtp-url`,
  channel: (prefix: string, channel: string, part: 'url' | 'secret') => `${prefix}channel/${channel}/${part}`,
};

export class SecretsManagerReviewerSecrets implements ReviewerSecrets {
  private readonly secrets: SecretTextReader;

  constructor(
    client: SecretsManagerClient,
    private readonly prefix: string,
    maxAgeSeconds = 300,
  ) {
    this.secrets = new SecretTextReader(client, maxAgeSeconds);
  }

  async linkKey(): Promise<Buffer> {
    const name = reviewerSecretNames.linkKey(this.prefix);
    const raw = await this.read(name);
    if (raw === undefined)
      throw new ReviewerSecretError(
        `the secret ${name} is not set in Secrets Manager: links to the confirmation page are signed with it`,
      );
    try {
      return signingKey(raw, `the secret ${name}`);
    } catch (error) {
      if (error instanceof SigningSecretError) throw new ReviewerSecretError(error.message);
      throw error;
    }
  }

  channelUrl(channel: string): Promise<string | undefined> {
    return this.read(reviewerSecretNames.channel(this.prefix, channel, 'url'));
  }

  channelSecret(channel: string): Promise<string | undefined> {
    return this.read(reviewerSecretNames.channel(this.prefix, channel, 'secret'));
  }

  smtpUrl(): Promise<string | undefined> {
    return this.read(reviewerSecretNames.smtpUrl(this.prefix));
  }

  private async read(name: string): Promise<string | undefined> {
    const text = (await this.secrets.read(name))?.trim();
    return text === undefined || text === '' ? undefined : text;
  }
}
