/**
 * The sweeper's reviewers' pass, loaded on its first run (sweeper-runtime.ts): the job side of the
 * engine (answering a selection when a timeout's default is taken needs the workflows), built once
 * per instance, and the pass itself (sweep-reviews.ts).
 */
import type { ReviewPassResult } from '../../reviewers/review-pass';
import { createJobsRuntime } from './jobs-runtime';
import { awsReviewerSecrets } from './reviewers';
import { sweepReviews } from './sweep-reviews';

/** The pass of this instance: each call runs one, starting nothing after `until` (epoch ms). */
export function createReviewSweep(
  env: Readonly<Record<string, string | undefined>>,
): (until: number) => Promise<ReviewPassResult | undefined> {
  const runtime = createJobsRuntime({ env });
  // Once per instance: the secrets' cache then spares a read of each secret every minute.
  const secrets = awsReviewerSecrets(runtime, env);
  return (until) => runtime.settle(sweepReviews(runtime, until, env, secrets));
}
