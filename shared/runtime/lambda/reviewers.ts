/**
 * The reviewers on aws: their secrets, and the confirmation page (`GET`/`POST /review/{token}`) the
 * webhooks function serves on the HTTP API's public side (the pass: sweep-reviews.ts). Both read the `reviewers` section of opflow.config.json from the stack's
 * config item, and their secrets (the link key, channel URLs, the SMTP server) from Secrets
 * Manager under OPFLOW_REVIEW_SECRET_PREFIX, never from the environment. The sweeper loads this
 * module only when the stack set reviewers up (a chunk of its own), so its cold start stays small.
 */
import { awsClientConfig } from '../../backends/aws/clients';
import { createSecretsManagerClient } from '../../backends/aws/secrets-manager-client';
import { SecretsManagerReviewerSecrets } from '../../backends/aws/secrets-manager-reviewer-secrets';
import { errorMessage } from '../../errors/error-message';
import type { HttpAnswer } from '../../http/api-error';
import { answerReviewPage, type ReviewRequest } from '../../reviewers/confirmation-page';
import { type ReviewerSecrets, reviewSecretPrefixVariable } from '../../reviewers/reviewer-secrets';
import type { JobSide } from './jobs-runtime';
import type { Observability } from './observability';

type Env = Readonly<Record<string, string | undefined>>;

/** The reviewers' secrets on Secrets Manager, or undefined when the stack set up none. */
export function awsReviewerSecrets(
  pipeline: Pick<JobSide, 'config'>,
  env: Env = process.env,
): SecretsManagerReviewerSecrets | undefined {
  const prefix = env[reviewSecretPrefixVariable]?.trim();
  if (!prefix) return undefined;
  return new SecretsManagerReviewerSecrets(
    createSecretsManagerClient(awsClientConfig(pipeline.config)),
    prefix,
  );
}

/**
 * The confirmation page on the webhooks function: the signed token is its only credential, so the
 * route has no authorizer. Undefined when the stack set up no reviewers (the route answers 404).
 */
export function awsReviewPage(
  pipeline: Pick<JobSide, 'deps' | 'config'> & { observability: Observability },
  env: Env = process.env,
  secrets: ReviewerSecrets | undefined = awsReviewerSecrets(pipeline, env),
): ((request: ReviewRequest) => Promise<HttpAnswer>) | undefined {
  if (!secrets) return undefined;
  return async (request) => {
    let key: Buffer;
    try {
      key = await secrets.linkKey();
    } catch (error) {
      pipeline.observability.logger.error('reviewers: the link key cannot be read', {
        error: errorMessage(error),
      });
      return {
        status: 503,
        headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
        body: 'The confirmation page is not available now: its key cannot be read. Try again later.',
      };
    }
    return answerReviewPage(pipeline.deps, key, request);
  };
}
