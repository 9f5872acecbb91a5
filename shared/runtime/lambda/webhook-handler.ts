/**
 * The webhook route's handler on aws: raw body bytes, secrets in Secrets Manager under
 * OPFLOW_WEBHOOK_SECRET_PREFIX, mappings from the automation config item (automation.ts). A file of
 * its own, imported by the webhooks function only: the api reaches automation.ts at start, and
 * every file it reaches statically is in its cold start when a lazy chunk (the reviewers' pass) uses
 * the Secrets Manager client.
 */
import { awsClientConfig } from '../../backends/aws/clients';
import { DynamoDbWebhookDeliveries } from '../../backends/aws/dynamodb-webhook-deliveries';
import { createSecretsManagerClient } from '../../backends/aws/secrets-manager-client';
import { SecretsManagerWebhookSecrets } from '../../backends/aws/secrets-manager-webhook-secrets';
import { type OpflowConfig, opflowConfigSchema } from '../../config/opflow-config';
import type { JobApiResponse } from '../../http/job-api';
import { createWebhookHandler, type WebhookRequest } from '../../http/webhooks';
import type { JobSide } from './jobs-runtime';
import type { Observability } from './observability';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The webhook handler for these mappings, or undefined when the stack set up no webhook secrets.
 * As it is built (the function's first request) it reads the secret of every mapped source and logs,
 * naming the source and the secret (never its value), each one missing or malformed: said when the
 * function starts, not found by a delivery's 500. Such a source's deliveries are refused as
 * misconfigured until it is fixed.
 */
export function awsWebhookHandler(
  pipeline: Pick<JobSide, 'deps' | 'aws' | 'config'> & { observability?: Observability | undefined },
  webhooks: OpflowConfig['webhooks'],
  env: Env = process.env,
): ((request: WebhookRequest) => Promise<JobApiResponse>) | undefined {
  const prefix = env.OPFLOW_WEBHOOK_SECRET_PREFIX?.trim();
  if (!prefix) return undefined;
  const parsed = opflowConfigSchema.parse({ webhooks });
  // Its own Secrets Manager client: built only where the stack set up webhooks.
  const secrets = new SecretsManagerWebhookSecrets(
    createSecretsManagerClient(awsClientConfig(pipeline.config)),
    prefix,
  );
  const log = pipeline.observability?.logger;
  // In the background: no request waits for it, and the reads warm the secrets' cache.
  void secrets.problems(Object.keys(parsed.webhooks)).then(
    (problems) => {
      for (const problem of problems)
        log?.error('webhook secret not usable (read at cold start)', { problem });
    },
    (error: unknown) =>
      log?.warn('webhook secrets not checked at cold start', {
        error: error instanceof Error ? error.message : String(error),
      }),
  );
  return createWebhookHandler({
    deps: pipeline.deps,
    config: parsed,
    deliveries: new DynamoDbWebhookDeliveries({
      client: pipeline.aws.clients.documents,
      tableName: pipeline.config.tableName,
    }),
    secrets,
  });
}
