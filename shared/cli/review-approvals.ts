/**
 * The reviewers' rules for an answer given from the command line (`opflow resume --select`, `opflow
 * bulk answer`): the `reviewers` section of the config file (`--config`, OPFLOW_CONFIG,
 * ./opflow.config.json; on aws the file the stack was deployed with), so a rule's second approver
 * holds from the CLI as it does from a link, the job API, MCP or the dashboard, from the moment a job
 * waits, before any notice was sent. A first approval given here calls for the second approver at
 * once (`callSecondApprovers`), as `opflow serve` does for one given through it.
 */
import { callbackPolicyFromEnv } from '../callbacks/ssrf-guard';
import { ConfigFileError, loadOpflowConfig } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import type { Job } from '../engine/job-record';
import { openConfirmations } from '../engine/review-record';
import { errorMessage } from '../errors/error-message';
import type { ReviewersConfig } from '../reviewers/review-config';
import { approvalsOf } from '../reviewers/review-rules';
import type { CliContext } from './context';
import { CliError, ExitCode } from './exit-codes';

/** Where people reach `opflow serve` (its confirmation page): the links in notices sent from the CLI. */
const publicUrlVariable = 'OPFLOW_PUBLIC_URL';

async function reviewersOf(
  ctx: CliContext,
  explicit: string | undefined,
): Promise<ReviewersConfig | undefined> {
  try {
    const { config } = await loadOpflowConfig({
      explicit,
      env: ctx.io.env,
      cwd: ctx.io.cwd,
      workflows: ctx.workflows,
      callbackPolicy: callbackPolicyFromEnv(ctx.io.env),
    });
    return config.reviewers;
  } catch (error) {
    if (error instanceof ConfigFileError) throw new CliError(error.message, ExitCode.usage);
    throw error;
  }
}

/** How many people must confirm a job's selection by the config file's rules; undefined when no rule asks for two. */
export async function cliReviewApprovals(
  ctx: CliContext,
  explicit: string | undefined,
): Promise<((job: Job) => number) | undefined> {
  return approvalsOf(await reviewersOf(ctx, explicit));
}

/** The jobs of `answered` whose answer was kept as a first approval (a second person must confirm). */
export function firstApprovals(answered: readonly Job[]): Job[] {
  return answered.filter((job) => openConfirmations(job).some((answer) => answer.version === job.version));
}

/**
 * Calls for the second approver of jobs whose first approval was just recorded from the CLI: the
 * reviewers' pass of `opflow serve`, run now for these jobs only, instead of at serve's next pass.
 * It claims each notice round before sending, so a pass of serve that meets the same job sends
 * nothing twice. The links point at OPFLOW_PUBLIC_URL (where people reach `opflow serve`); without
 * it, or without the reviewers' secrets in the environment (aws keeps them in Secrets Manager), it
 * sends nothing and says that the next pass (serve's, the aws sweeper's) calls them.
 */
export async function callSecondApprovers(
  ctx: CliContext,
  deps: JobDeps,
  explicit: string | undefined,
  jobs: readonly Job[],
): Promise<void> {
  const waiting = firstApprovals(jobs);
  if (waiting.length === 0) return;
  const config = await reviewersOf(ctx, explicit);
  if (!config || config.rules.length === 0) return;
  const later = (why: string): void => {
    ctx.io.stderr.write(
      `opflow: the second approver is called at the reviewers' next pass (opflow serve's, or the aws sweeper's): ${why}\n`,
    );
  };
  const publicUrl = ctx.io.env[publicUrlVariable]?.trim();
  if (!publicUrl || !/^https?:\/\/[^/?#@]+/.test(publicUrl))
    return later(`set ${publicUrlVariable} to where people reach opflow serve to call them from here`);
  const { envReviewerSecrets, ReviewerSecretError } = await import('../reviewers/reviewer-secrets');
  const secrets = envReviewerSecrets(ctx.io.env);
  try {
    await secrets.linkKey();
  } catch (error) {
    if (error instanceof ReviewerSecretError) return later(error.message);
    throw error;
  }
  const { reviewPass } = await import('../reviewers/review-pass');
  try {
    const result = await reviewPass(
      { ...deps, config, secrets, publicUrl, policy: callbackPolicyFromEnv(ctx.io.env) },
      { jobIds: waiting.map((job) => job.id) },
    );
    if (result.failedDeliveries > 0)
      later(`${result.failedDeliveries} notice(s) could not be delivered (opflow status names the channels)`);
  } catch (error) {
    later(errorMessage(error));
  }
}
