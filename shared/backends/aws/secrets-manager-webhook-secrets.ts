/**
 * Signing secrets of incoming webhooks on Secrets Manager: source `s` has the secret `<prefix>s`.
 * Cached for a bounded time (Powertools' SecretsProvider); `refresh` reads it again, which the
 * webhook handler does once after a failed check, so a rotated secret needs no deploy.
 */
import { ParameterNotFoundError } from '@aws-lambda-powertools/parameters';
import type { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { normalizeSecret } from '../../callbacks/secret-format';
import type { WebhookSecrets } from '../../http/webhooks';
import { secretsProviderOnFirstUse } from './secrets-provider';

export class SecretsManagerWebhookSecrets implements WebhookSecrets {
  /** Built on the first read (secrets-provider.ts): building it builds the client. */
  private readonly provider: () => SecretsProvider;

  constructor(
    client: SecretsManagerClient,
    private readonly prefix: string,
    private readonly maxAgeSeconds = 300,
  ) {
    this.provider = secretsProviderOnFirstUse(client);
  }

  get(source: string): Promise<string | undefined> {
    return this.read(source, false);
  }

  refresh(source: string): Promise<string | undefined> {
    return this.read(source, true);
  }

  private async read(source: string, forceFetch: boolean): Promise<string | undefined> {
    try {
      const value = await this.provider().get(`${this.prefix}${source}`, {
        maxAge: this.maxAgeSeconds,
        forceFetch,
        throwOnMissing: true,
      });
      const text = typeof value === 'string' ? value : Buffer.from(value as Uint8Array).toString('utf8');
      return text.trim() === '' ? undefined : normalizeSecret(text);
    } catch (error) {
      if (error instanceof ParameterNotFoundError) return undefined;
      throw error;
    }
  }
}
