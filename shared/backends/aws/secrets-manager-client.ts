/**
 * The Secrets Manager client of the AWS backend (clients.ts's other builders are beside it there),
 * in a file of its own so that importing clients.ts does not make the Secrets Manager SDK reachable
 * from a function's entry: the api and the sweeper import it only from the reviewers' pass, a chunk
 * loaded on first use (shared/runtime/lambda/reviewers.ts).
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type AwsClientConfig, type Instrument, onFirstUse, settingsFor, unseen } from './clients';

export function createSecretsManagerClient(
  config: AwsClientConfig,
  instrument: Instrument = unseen,
): SecretsManagerClient {
  return onFirstUse(SecretsManagerClient.prototype, () =>
    instrument(new SecretsManagerClient(settingsFor(config, 'secretsManager'))),
  );
}
