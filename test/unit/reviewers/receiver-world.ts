/**
 * A reviewers world for the unit tests of shared/reviewers: a hook receiver, a harness and a
 * manual-selection demo job waiting for its answer (`withReceiver`).
 */
import { submitJob } from '../../../shared/engine';
import type { Job } from '../../../shared/engine/job-record';
import { reviewersConfigSchema } from '../../../shared/reviewers/review-config';
import type { reviewPass } from '../../../shared/reviewers/review-pass';
import { envReviewerSecrets } from '../../../shared/reviewers/reviewer-secrets';
import { drive } from '../../support/memory-ports';
import { type ReceivedPost, startHookReceiver } from '../../support/reviewer-receivers';
import { type Harness, harness } from '../engine/fixtures';

export const linkSecret = 'a-link-secret-of-at-least-24-bytes';

export interface ReceiverWorld {
  /** `127.0.0.1:<port>`, for channel URLs and the callback allow-list. */
  host: string;
  /** The bodies the receiver took so far, in order. */
  bodies(): string[];
  /** A manual-selection demo job, driven to its wait. */
  job: Job;
  h: Harness;
  /** The pass's dependencies: `config` (the reviewers section) and the secrets' variables (the link key added). */
  passDeps(config: unknown, env: Record<string, string>): Parameters<typeof reviewPass>[0];
}

/**
 * A hook receiver (test/support/reviewer-receivers.ts) that keeps every body and answers `answer`'s
 * status and text (200 by default), a harness and a manual-selection job waiting for its answer;
 * the receiver is closed after.
 */
export async function withReceiver(
  run: (world: ReceiverWorld) => Promise<void>,
  answer?: (post: ReceivedPost) => [number, string],
): Promise<void> {
  const receiver = await startHookReceiver(answer);
  const { host } = receiver;
  try {
    const h = harness();
    const { job } = await submitJob(h.deps, {
      workflow: 'demo',
      input: { issue: 'x' },
      selection: { mode: 'manual' },
    });
    await drive(h.deps, h.queue, h.clock);
    await run({
      host,
      bodies: () => receiver.taken.map((post) => post.body),
      job,
      h,
      passDeps: (config, env) => ({
        ...h.deps,
        config: reviewersConfigSchema.parse(config),
        secrets: envReviewerSecrets({ OPFLOW_REVIEW_LINK_SECRET: linkSecret, ...env }),
        publicUrl: 'http://opflow.test',
        policy: { allowHosts: [host] },
      }),
    });
  } finally {
    await receiver.close();
  }
}
