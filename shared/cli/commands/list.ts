/**
 * `opflow list [--status S] [--workflow W] [--limit N]`: jobs, newest first.
 */
import { type JobStatus, jobStatuses } from '../../engine/job-record';
import { searchJobs } from '../../http/job-search';
import { didYouMean } from '../../openplatform/closest-name';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { reportLocationOf } from '../drive-jobs';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { formatTable, jobSummary, stepTitle, upstreamShort } from '../format';

export interface ListOptions extends GlobalOptions {
  status?: string | undefined;
  workflow?: string | undefined;
  batch?: string | undefined;
  tenant?: string | undefined;
  limit: string;
}

export function parseStatus(value: string): JobStatus {
  const status = value.toUpperCase().replace(/-/g, '_');
  if ((jobStatuses as readonly string[]).includes(status)) return status as JobStatus;
  throw new CliError(`--status must be one of ${jobStatuses.join(', ')}, not "${value}"`, ExitCode.usage);
}

export function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new CliError(`--limit must be a whole number from 1 to 1000, not "${value}"`, ExitCode.usage);
  }
  return limit;
}

export async function listCommand(ctx: CliContext, options: ListOptions): Promise<ExitCodeValue> {
  const status = options.status === undefined ? undefined : parseStatus(options.status);
  const limit = parseLimit(options.limit);
  // A workflow name that does not exist is a typing slip, not an empty list.
  if (options.workflow !== undefined && !ctx.workflows.has(options.workflow)) {
    const known = [...ctx.workflows.keys()].sort();
    throw new CliError(
      `--workflow: no workflow "${options.workflow}"${didYouMean(options.workflow, known)}; known workflows: ${known.join(', ')}`,
      ExitCode.usage,
    );
  }
  const backend = await openBackend(ctx, options, 'records');
  try {
    const { jobs, cursor } = await searchJobs(
      backend.deps.store,
      { status, batchId: options.batch, tenant: options.tenant },
      { workflow: options.workflow },
      limit,
    );
    const shown = jobs.slice(0, limit);
    if (options.json) {
      const summaries = [];
      for (const job of shown) summaries.push(jobSummary(job, await reportLocationOf(backend, job)));
      writeJson(ctx.io, summaries);
      return ExitCode.ok;
    }
    if (shown.length === 0) {
      ctx.io.stdout.write(`no jobs${status ? ` with status ${status}` : ''}\n`);
      return ExitCode.ok;
    }
    const rows = shown.map((job) => [
      job.id,
      job.workflow,
      job.status,
      stepTitle(job, backend.deps.workflows),
      new Date(job.updatedAt).toISOString().replace('T', ' ').slice(0, 19),
      upstreamShort(job.upstream),
      job.label ?? '',
    ]);
    ctx.io.stdout.write(
      `${formatTable(['JOB', 'WORKFLOW', 'STATUS', 'STEP', 'UPDATED (UTC)', 'UPSTREAM', 'LABEL'], rows)}\n`,
    );
    if (shown.some((job) => job.upstream?.kind === 'sandbox'))
      ctx.io.stdout.write('(UPSTREAM sandbox: simulated data, not real publications)\n');
    if (jobs.length > limit || cursor !== undefined)
      ctx.io.stdout.write(`(first ${limit}; use --limit to see more)\n`);
    return ExitCode.ok;
  } finally {
    await backend.close();
  }
}
