/**
 * Powertools' SecretsProvider over an SDK client, built on its first call. Its constructor probes
 * the client (`in` checks, the user-agent middleware), which builds the client that `onFirstUse`
 * (clients.ts) defers: built with the key source or the webhook secrets at a Lambda instance's
 * start, it cost the Secrets Manager client's build (some 20 ms) at every cold start, also for the
 * invocations that read no secret (an api call that lists jobs). Now the first read of a secret pays it.
 */
import { ParameterNotFoundError } from '@aws-lambda-powertools/parameters';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

export function secretsProviderOnFirstUse(client: SecretsManagerClient): () => SecretsProvider {
  let provider: SecretsProvider | undefined;
  return () => {
    provider ??= new SecretsProvider({ awsSdkV3Client: client });
    return provider;
  };
}

/**
 * A secret's text by name, through one SecretsProvider built on first use, cached for `maxAgeSeconds`
 * (5 minutes unless said); `forceFetch` reads it again now. Undefined when the secret does not exist;
 * a binary secret is read as UTF-8. The key source, callback and webhook secrets all read this way.
 */
export class SecretTextReader {
  private readonly provider: () => SecretsProvider;

  constructor(
    client: SecretsManagerClient,
    private readonly maxAgeSeconds = 300,
  ) {
    this.provider = secretsProviderOnFirstUse(client);
  }

  async read(name: string, forceFetch = false): Promise<string | undefined> {
    let value: string | Uint8Array | undefined;
    try {
      value = await this.provider().get(name, {
        maxAge: this.maxAgeSeconds,
        forceFetch,
        throwOnMissing: true,
      });
    } catch (error) {
      if (error instanceof ParameterNotFoundError) return undefined;
      throw error;
    }
    return typeof value === 'string' ? value : Buffer.from(value as Uint8Array).toString('utf8');
  }
}
