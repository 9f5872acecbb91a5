/**
 * The callback sender's wiring on aws, for `opflow --backend aws callbacks`: the DynamoDB outbox and
 * the per-tenant signing secrets in Secrets Manager (`OPFLOW_CALLBACK_SECRET_PREFIX<tenant>`). What
 * it leaves for later (a retry, a busy host) waits in the outbox: the sweeper's minute pass marks it
 * when it comes due and the job table's stream hands it to the Lambda `callback-sender`.
 */
import { SecretsManagerCallbackSecrets } from '../../backends/aws/secrets-manager-callback-secrets';
import { type CallbackSenderDeps, presignedReportLinks } from '../../callbacks/sender';
import { callbackPolicyFromEnv } from '../../callbacks/ssrf-guard';
import type { CallbackSecrets } from '../../engine/callback-ports';
import { wakeThroughStream } from './callback-notifier';
import type { AwsPipeline } from './pipeline';

export const callbackSecretPrefixVariable = 'OPFLOW_CALLBACK_SECRET_PREFIX';

type Env = Readonly<Record<string, string | undefined>>;

/** The per-tenant signing secrets of a pipeline's stack. */
export function awsCallbackSecrets(pipeline: AwsPipeline, env: Env = process.env): CallbackSecrets {
  const prefix = env[callbackSecretPrefixVariable]?.trim();
  if (!prefix) {
    throw new Error(`${callbackSecretPrefixVariable} is not set (the stack output CallbackSecretPrefix)`);
  }
  return new SecretsManagerCallbackSecrets(pipeline.aws.clients.secretsManager, prefix);
}

/** The sender's dependencies for `opflow --backend aws callbacks resend`. */
export function callbackSenderDeps(pipeline: AwsPipeline, env: Env = process.env): CallbackSenderDeps {
  const callbacks = pipeline.deps.callbacks!;
  return {
    store: pipeline.deps.store,
    outbox: callbacks.outbox,
    secrets: awsCallbackSecrets(pipeline, env),
    clock: pipeline.deps.clock,
    send: { policy: callbackPolicyFromEnv(env) },
    // Presigned links made with a role's session credentials die with the session: an hour is honest.
    reportLinks: presignedReportLinks(pipeline.deps.reports, 3600),
    wake: wakeThroughStream,
  };
}
