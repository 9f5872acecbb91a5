/**
 * One review pass on aws (the sweeper's every minute; the api's and the confirmation page's over the
 * jobs a first approval just waits on). A module of its own, apart from the confirmation page
 * (reviewers.ts): the webhooks function imports the page at start and this pass only in a chunk, on
 * a first approval, so the pass's rendering and sending stay out of its cold start.
 */
import type { ReviewersConfig } from '../../reviewers/review-config';
import { type ReviewPassResult, reviewPass } from '../../reviewers/review-pass';
import type { ReviewerSecrets } from '../../reviewers/reviewer-secrets';
import { publicUrlVariable } from '../local/callback-loop';
import { loadAutomationSettings } from './automation';
import type { JobSide } from './jobs-runtime';
import { engineLogger, type Observability } from './observability';
import { awsReviewerSecrets } from './reviewers';

/** The pass's callers build the secrets once per instance; the api's and the page's take them from here, in the same chunk. */
export { awsReviewerSecrets };

type Env = Readonly<Record<string, string | undefined>>;

/** The reviewers of the stack's config item, or undefined when it has no rule. */
async function reviewersOf(
  pipeline: Pick<JobSide, 'aws' | 'config'>,
  env: Env,
): Promise<ReviewersConfig | undefined> {
  const { reviewers } = await loadAutomationSettings(pipeline, env);
  return reviewers && reviewers.rules.length > 0 ? reviewers : undefined;
}

/**
 * One review pass of the sweeper (or of the api over `jobIds`), starting no job's notices after `until` (epoch ms). Undefined when
 * the stack has no reviewers. The links point at OPFLOW_PUBLIC_URL (the HTTP API's URL). `secrets`
 * is built once per instance by the caller, so their cache (5 minutes) outlives a pass.
 */
export async function sweepReviews(
  pipeline: Pick<JobSide, 'deps' | 'aws' | 'config'> & { observability: Observability },
  until: number,
  env: Env = process.env,
  secrets: ReviewerSecrets | undefined = awsReviewerSecrets(pipeline, env),
  /** Only these jobs (the api's pass after a first approval); absent: every job awaiting a selection. */
  jobIds?: readonly string[],
): Promise<ReviewPassResult | undefined> {
  const config = secrets && (await reviewersOf(pipeline, env));
  if (!secrets || !config) return undefined;
  const publicUrl = env[publicUrlVariable]?.trim();
  if (!publicUrl)
    throw new Error(`${publicUrlVariable} is not set: the links of the notices are made from it`);
  return reviewPass(
    {
      ...pipeline.deps,
      log: engineLogger(pipeline.observability.logger),
      config,
      secrets,
      publicUrl,
      policy: pipeline.deps.callbacks?.policy,
    },
    { until, jobIds },
  );
}
