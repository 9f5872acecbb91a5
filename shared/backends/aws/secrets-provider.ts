/**
 * Powertools' SecretsProvider over an SDK client, built on its first call. Its constructor probes
 * the client (`in` checks, the user-agent middleware), which builds the client that `onFirstUse`
 * (clients.ts) defers: built with the key source or the webhook secrets at a Lambda instance's
 * start, it cost the Secrets Manager client's build (some 20 ms) at every cold start, also for the
 * invocations that read no secret (an api call that lists jobs). Now the first read of a secret pays it.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

export function secretsProviderOnFirstUse(client: SecretsManagerClient): () => SecretsProvider {
  let provider: SecretsProvider | undefined;
  return () => {
    provider ??= new SecretsProvider({ awsSdkV3Client: client });
    return provider;
  };
}
