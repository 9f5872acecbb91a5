/**
 * `opflow callbacks resend <jobId>`: a new round of delivery of a finished job's callback (after
 * its retries ran out, say), attempted at once; `opflow callbacks secret [--tenant t]`: the
 * Standard Webhooks secret receivers verify this tenant's callbacks with.
 */
import { resendCallback, runCallbackSender } from '../../callbacks/sender';
import { tenantNameSchema } from '../../engine/job-commands';
import { describeCallback } from '../callback-format';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';

export async function callbacksResendCommand(
  ctx: CliContext,
  jobId: string,
  options: GlobalOptions,
): Promise<ExitCodeValue> {
  const backend = await openBackend(ctx, options, 'records');
  try {
    const deps = await backend.callbackSender();
    await resendCallback(deps, jobId);
    // The first attempt now; later ones are made by `opflow serve` (or the aws callback sender).
    await runCallbackSender(deps);
    const job = await backend.deps.store.get(jobId);
    if (!job) throw new CliError(`no job ${jobId}`, ExitCode.notFound);
    if (options.json) writeJson(ctx.io, { jobId, callback: job.callback });
    else ctx.io.stdout.write(`${describeCallback(job).join('\n')}\n`);
    return job.callback?.state === 'delivered' ? ExitCode.ok : ExitCode.jobFailed;
  } finally {
    await backend.close();
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
  const backend = await openBackend(ctx, options, 'records');
  try {
    const secret = await (await backend.callbackSecrets()).secretFor(options.tenant);
    if (options.json) writeJson(ctx.io, { tenant: options.tenant, secret });
    else ctx.io.stdout.write(`${secret}\n`);
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}
