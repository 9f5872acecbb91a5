/**
 * The reviewers' rules for an answer given from the command line (`opflow resume --select`): the
 * `reviewers` section of the config file (`--config`, OPFLOW_CONFIG, ./opflow.config.json; on aws the
 * file the stack was deployed with), so a rule's second approver holds from the CLI as it does from a
 * link, the job API, MCP or the dashboard, from the moment a job waits, before any notice was sent.
 */
import { callbackPolicyFromEnv } from '../callbacks/ssrf-guard';
import { ConfigFileError, loadOpflowConfig } from '../config/opflow-config';
import type { Job } from '../engine/job-record';
import { approvalsOf } from '../reviewers/review-rules';
import type { CliContext } from './context';
import { CliError, ExitCode } from './exit-codes';

/** How many people must confirm a job's selection by the config file's rules; undefined when no rule asks for two. */
export async function cliReviewApprovals(
  ctx: CliContext,
  explicit: string | undefined,
): Promise<((job: Job) => number) | undefined> {
  try {
    const { config } = await loadOpflowConfig({
      explicit,
      env: ctx.io.env,
      cwd: ctx.io.cwd,
      workflows: ctx.workflows,
      callbackPolicy: callbackPolicyFromEnv(ctx.io.env),
    });
    return approvalsOf(config.reviewers);
  } catch (error) {
    if (error instanceof ConfigFileError) throw new CliError(error.message, ExitCode.usage);
    throw error;
  }
}
