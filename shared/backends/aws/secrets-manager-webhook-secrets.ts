/**
 * Signing secrets of incoming webhooks on Secrets Manager: source `s` has the secret `<prefix>s`.
 * Cached for a bounded time (Powertools' SecretsProvider); `refresh` reads it again, which the
 * webhook handler does once after a failed check, so a rotated secret needs no deploy.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { normalizeSecret } from '../../callbacks/secret-format';
import { SigningSecretError, signingKey } from '../../config/signing-secrets';
import type { WebhookSecrets } from '../../http/webhooks';
import { SecretTextReader } from './secrets-provider';

export class SecretsManagerWebhookSecrets implements WebhookSecrets {
  private readonly secrets: SecretTextReader;

  constructor(
    client: SecretsManagerClient,
    private readonly prefix: string,
    maxAgeSeconds = 300,
  ) {
    this.secrets = new SecretTextReader(client, maxAgeSeconds);
  }

  get(source: string): Promise<string | undefined> {
    return this.read(source, false);
  }

  refresh(source: string): Promise<string | undefined> {
    return this.read(source, true);
  }

  /**
   * What is wrong with the secrets of `sources` (read afresh), one sentence each naming the source
   * and the secret, never its value: a missing secret, or one no signature could be checked with.
   * The api function runs it at cold start, so a malformed secret is said then, not at a delivery.
   */
  async problems(sources: readonly string[]): Promise<string[]> {
    const found: string[] = [];
    for (const source of sources) {
      const name = `${this.prefix}${source}`;
      const value = await this.read(source, true);
      if (value === undefined) {
        found.push(`webhook source ${source}: the secret ${name} is not set in Secrets Manager`);
        continue;
      }
      try {
        signingKey(value, `webhook source ${source}: the secret ${name}`);
      } catch (error) {
        if (!(error instanceof SigningSecretError)) throw error;
        found.push(error.message);
      }
    }
    return found;
  }

  private async read(source: string, forceFetch: boolean): Promise<string | undefined> {
    const text = await this.secrets.read(`${this.prefix}${source}`, forceFetch);
    return text === undefined || text.trim() === '' ? undefined : normalizeSecret(text);
  }
}
