/**
 * The api function's call for the second approver: a first approval given through the job API (a
 * job's `POST .../selection`, a bulk answer) runs the reviewers' pass for those jobs before the
 * request is answered, as `opflow serve` and the CLI do, instead of waiting for the sweeper's next
 * run. The pass claims each notice round before sending, so the sweeper meeting the same job after it
 * sends nothing twice. Loaded by functions/api only where a reviewers' rule asks for two approvers
 * and the stack gave it the reviewers' secrets (OPFLOW_REVIEW_SECRET_PREFIX): a chunk of its own.
 */
import { openConfirmations } from '../../engine/review-record';
import { errorMessage } from '../../errors/error-message';
import { reviewSecretPrefixVariable } from '../../reviewers/reviewer-secrets';
import type { JobsRuntime } from './jobs-runtime';

/** How long the pass may start notices within a request (API Gateway cuts a request at 30 s). */
const passBudgetMs = 10_000;

export interface SecondApproversCaller {
  /** Calls the second approver of every job whose first approval this invocation recorded. */
  flush(): Promise<void>;
}

/**
 * Watches the runtime's job changes for first approvals; undefined when the function has no
 * reviewers' secrets (the sweeper's next run calls them then).
 */
export function secondApproversCaller(
  runtime: JobsRuntime,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SecondApproversCaller | undefined {
  if (!env[reviewSecretPrefixVariable]?.trim()) return undefined;
  // The pass and its secrets (Secrets Manager) load on the first approval, once per instance.
  let reviewers: Promise<typeof import('./sweep-reviews')> | undefined;
  let secrets: ReturnType<typeof import('./reviewers')['awsReviewerSecrets']> | undefined;
  const approved = new Set<string>();
  // A listener of the runtime's own job changes: the engine's deps are left as the caller made them.
  runtime.onJobChange((job) => {
    if (openConfirmations(job).some((answer) => answer.version === job.version)) approved.add(job.id);
  });
  const logger = runtime.observability.logger;
  return {
    async flush() {
      if (approved.size === 0) return;
      const jobIds = [...approved];
      approved.clear();
      try {
        reviewers ??= import('./sweep-reviews');
        const { awsReviewerSecrets, sweepReviews } = await reviewers;
        secrets ??= awsReviewerSecrets(runtime, env);
        const result = await sweepReviews(
          runtime,
          runtime.deps.clock.now() + passBudgetMs,
          env,
          secrets,
          jobIds,
        );
        if (result && result.failedDeliveries > 0)
          logger.warn('reviewers: a call for the second approver was not delivered; the sweeper retries', {
            failedDeliveries: result.failedDeliveries,
          });
      } catch (error) {
        logger.warn("reviewers: the second approver is called at the sweeper's next run", {
          error: errorMessage(error),
        });
      }
    },
  };
}
