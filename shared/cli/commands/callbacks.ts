/**
 * `opflow callbacks resend <jobId>`: a new round of delivery of a finished job's callback (after
 * its retries ran out, say), attempted at once; `opflow callbacks secret [--tenant t]`: the
 * Standard Webhooks secret receivers verify this tenant's callbacks with.
 */
import { LocalCallbackSecrets } from '../../backends/local/sqlite-callback-outbox';
import { type CallbackSenderDeps, resendCallback, runCallbackSender } from '../../callbacks/sender';
import { callbackPolicyFromEnv } from '../../callbacks/ssrf-guard';
import type { CallbackSecrets } from '../../engine/callback-ports';
import { tenantNameSchema } from '../../engine/job-commands';
import { localReportLinks } from '../../runtime/local/callback-loop';
import type { Pipeline } from '../../runtime/pipeline';
import { describeCallback } from '../callback-format';
import { asLocal, type CliContext, type GlobalOptions, openPipeline, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';

/** The secrets of callbacks of a pipeline's backend. */
async function secretsOf(ctx: CliContext, pipeline: Pipeline): Promise<CallbackSecrets> {
  const local = asLocal(pipeline);
  if (local) return new LocalCallbackSecrets(local.local.db, ctx.io.env);
  const { awsCallbackSecrets } = await import('../../runtime/aws/callbacks');
  return awsCallbackSecrets(pipeline as never, ctx.io.env);
}

async function senderDeps(pipeline: Pipeline, ctx: CliContext): Promise<CallbackSenderDeps> {
  const callbacks = pipeline.deps.callbacks;
  if (!callbacks) throw new CallbackSetupError();
  const local = asLocal(pipeline);
  if (!local) {
    // The same wiring as the callback-sender function: presigned links, retries woken by its queue.
    const { callbackSenderDeps } = await import('../../runtime/aws/callbacks');
    return callbackSenderDeps(pipeline as never, ctx.io.env);
  }
  return {
    store: pipeline.deps.store,
    outbox: callbacks.outbox,
    secrets: await secretsOf(ctx, pipeline),
    reportLinks: localReportLinks(ctx.io.env),
    clock: pipeline.deps.clock,
    send: { policy: callbackPolicyFromEnv(ctx.io.env) },
  };
}

class CallbackSetupError extends CliError {
  constructor() {
    super('callbacks are not set up on this backend', ExitCode.environment);
  }
}

export async function callbacksResendCommand(
  ctx: CliContext,
  jobId: string,
  options: GlobalOptions,
): Promise<ExitCodeValue> {
  const pipeline = await openPipeline(ctx, options, 'records');
  try {
    const deps = await senderDeps(pipeline, ctx);
    await resendCallback(deps, jobId);
    // The first attempt now; later ones are made by `opflow serve` (or the aws callback sender).
    await runCallbackSender(deps);
    const job = await pipeline.deps.store.get(jobId);
    if (!job) throw new CliError(`no job ${jobId}`, ExitCode.notFound);
    if (options.json) writeJson(ctx.io, { jobId, callback: job.callback });
    else ctx.io.stdout.write(`${describeCallback(job).join('\n')}\n`);
    return job.callback?.state === 'delivered' ? ExitCode.ok : ExitCode.jobFailed;
  } finally {
    await pipeline.close();
  }
}

export async function callbacksSecretCommand(
  ctx: CliContext,
  options: GlobalOptions & { tenant: string },
): Promise<ExitCodeValue> {
  const tenant = tenantNameSchema.safeParse(options.tenant);
  if (!tenant.success)
    throw new CliError(
      `--tenant: ${JSON.stringify(options.tenant)} is not a tenant name: ${tenant.error.issues[0]?.message}`,
      ExitCode.usage,
    );
  const pipeline = await openPipeline(ctx, options, 'records');
  try {
    const secret = await (await secretsOf(ctx, pipeline)).secretFor(options.tenant);
    if (options.json) writeJson(ctx.io, { tenant: options.tenant, secret });
    else ctx.io.stdout.write(`${secret}\n`);
    return ExitCode.ok;
  } finally {
    await pipeline.close();
  }
}
