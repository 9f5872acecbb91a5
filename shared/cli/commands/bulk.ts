/**
 * `opflow bulk <retry|redrive|cancel|answer> [filters]`: one action on every job a filter selects,
 * across batches. It always counts first (a dry run: how many jobs, and a sample), then asks
 * (a terminal prompt, `y` on standard input, or `--yes`), then acts on that same set: a set that
 * changed since it was counted is refused, a job changed meanwhile is skipped and named.
 */

import { createInterface } from 'node:readline/promises';
import { maxDeadlineMs } from '../../engine/job-commands';
import type { Job } from '../../engine/job-record';
import { failureKinds, jobStatuses } from '../../engine/job-record';
import { didYouMean } from '../../openplatform/closest-name';
import {
  type BulkOutcome,
  type BulkPreview,
  BulkSelectionChanged,
  previewBulk,
  runBulk,
} from '../../runtime/bulk';
import { type BulkRequest, bulkActions, bulkRequestSchema } from '../../runtime/bulk-request';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { formatTable, printable, stepTitle } from '../format';
import { parseDuration } from './run';

export interface BulkCommandOptions extends GlobalOptions {
  status?: string | undefined;
  workflow?: string | undefined;
  tenant?: string | undefined;
  batch?: string | undefined;
  label?: string | undefined;
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  failure?: string | undefined;
  fromStart?: boolean | undefined;
  deadline?: string | undefined;
  select?: string | undefined;
  takeDefaults?: boolean | undefined;
  by?: string | undefined;
  dryRun?: boolean | undefined;
  yes?: boolean | undefined;
  sample: string;
}

const pastTense: Record<BulkRequest['action'], string> = {
  retry: 'retried',
  redrive: 'redriven',
  cancel: 'cancelled',
  answer: 'answered',
};

/** The request the flags describe, validated as the job API validates its body. */
function requestOf(action: string, options: BulkCommandOptions): BulkRequest {
  const sampleSize = Number(options.sample);
  const parsed = bulkRequestSchema.safeParse({
    action,
    dryRun: true,
    sampleSize: Number.isInteger(sampleSize) ? sampleSize : options.sample,
    where: {
      status: options.status?.split(',').map((status) => status.trim().toUpperCase()),
      workflow: options.workflow,
      tenant: options.tenant,
      batchId: options.batch,
      label: options.label,
      createdAfter: options.createdAfter,
      createdBefore: options.createdBefore,
      failureKind: options.failure,
    },
    options: {
      fromStart: options.fromStart,
      deadlineMs:
        options.deadline === undefined
          ? undefined
          : parseDuration(options.deadline, '--deadline', { maxMs: maxDeadlineMs, maxText: '366d' }),
      selected: options.select?.split(',').map((id) => id.trim()),
      take: options.takeDefaults ? 'defaults' : undefined,
      by: options.by,
    },
  });
  if (!parsed.success) {
    const flags: Record<string, string> = {
      action: `<action> (one of ${bulkActions.join(', ')})`,
      'where.status': `--status (of ${jobStatuses.join(', ')})`,
      'where.batchId': '--batch',
      'where.createdAfter': '--created-after',
      'where.createdBefore': '--created-before',
      'where.failureKind': `--failure (one of ${failureKinds.join(', ')})`,
      'options.fromStart': '--from-start',
      'options.deadlineMs': '--deadline',
      'options.selected': '--select or --take-defaults',
      'options.take': '--take-defaults',
      'options.by': '--by',
      sampleSize: '--sample (0 to 100)',
    };
    const message = parsed.error.issues
      .map((issue) => {
        const path = issue.path.join('.');
        const flag = flags[path] ?? `--${path.split('.').pop()}`;
        return `${flag}: ${issue.message}`;
      })
      .join('; ');
    throw new CliError(message, ExitCode.usage);
  }
  return parsed.data;
}

/** The dry run's count and its sample, each job's step by the title people read (as opflow status says it). */
function describePreview(preview: BulkPreview, workflows: CliContext['workflows']): string {
  const lines = [
    `opflow bulk ${preview.action}: ${preview.count} job${preview.count === 1 ? '' : 's'} match (${preview.statuses.join(', ') || 'no status the action acts on'})`,
  ];
  if (preview.sample.length > 0) {
    lines.push(
      formatTable(
        ['job', 'workflow', 'status', 'step', 'tenant', 'label', 'error'],
        preview.sample.map((job) => [
          job.id,
          job.workflow,
          job.status,
          stepTitle(job, workflows),
          job.tenant,
          job.label ?? '',
          job.error ? `${job.error.kind}: ${job.error.message}`.slice(0, 60) : '',
        ]),
      ),
    );
    if (preview.count > preview.sample.length)
      lines.push(`... and ${preview.count - preview.sample.length} more`);
  }
  return lines.join('\n');
}

/** y or yes from the terminal's prompt, or from the first line of standard input when it is not one. */
async function confirmed(ctx: CliContext, question: string): Promise<boolean> {
  let answer: string;
  if (process.stdin.isTTY) {
    const prompt = createInterface({ input: process.stdin, output: ctx.io.stderr });
    try {
      answer = await prompt.question(`${question} [y/N] `);
    } finally {
      prompt.close();
    }
  } else {
    ctx.io.stderr.write(`${question} [y/N] (reading the answer from standard input)\n`);
    answer = (await ctx.io.readStdin(64)).split('\n')[0] ?? '';
  }
  return /^\s*y(es)?\s*$/i.test(answer);
}

function describeOutcome(outcome: BulkOutcome): string {
  const lines = [
    `${pastTense[outcome.action]} ${outcome.done} of ${outcome.count} jobs${outcome.skipped > 0 ? `; ${outcome.skipped} skipped:` : ''}`,
    ...outcome.skippedSample.map((skip) => `  ${skip.jobId}: ${printable(skip.reason)}`),
  ];
  if (outcome.skipped > outcome.skippedSample.length)
    lines.push(`  ... and ${outcome.skipped - outcome.skippedSample.length} more`);
  if (outcome.batches.length > 0) lines.push(`batches running again: ${outcome.batches.join(', ')}`);
  if (outcome.done > 0 && ['retry', 'redrive', 'answer'].includes(outcome.action))
    lines.push('they run in opflow serve, on aws, or here with opflow resume');
  return lines.join('\n');
}

export async function bulkCommand(
  ctx: CliContext,
  action: string,
  options: BulkCommandOptions,
): Promise<ExitCodeValue> {
  const request = requestOf(action, options);
  // A workflow name that does not exist is a typing slip, not a filter that matches nothing.
  if (options.workflow !== undefined && !ctx.workflows.has(options.workflow)) {
    const known = [...ctx.workflows.keys()].sort();
    throw new CliError(
      `--workflow: no workflow "${options.workflow}"${didYouMean(options.workflow, known)}; known workflows: ${known.join(', ')}`,
      ExitCode.usage,
    );
  }
  const backend = await openBackend(ctx, options, 'records');
  try {
    // Answers follow the reviewers' rules of the config file (a second approver), as from a link.
    const reviewers = request.action === 'answer' ? await import('../review-approvals') : undefined;
    // The jobs whose answer was kept as a first approval: their second approver is called at once.
    const approved: Job[] = [];
    if (reviewers) {
      backend.deps.reviewApprovals ??= await reviewers.cliReviewApprovals(ctx, undefined);
      const told = backend.deps.onJobChange;
      backend.deps.onJobChange = (job) => {
        told?.(job);
        approved.push(...reviewers.firstApprovals([job]));
      };
    }
    const preview = await previewBulk(backend.deps, request);
    if (!options.json || options.dryRun) {
      if (options.json) writeJson(ctx.io, preview);
      else ctx.io.stdout.write(`${describePreview(preview, ctx.workflows)}\n`);
    }
    if (options.dryRun || preview.count === 0) return ExitCode.ok;
    if (!options.yes && !(await confirmed(ctx, `${request.action} these ${preview.count} jobs?`))) {
      ctx.io.stderr.write('opflow: nothing changed (answer y, or add --yes)\n');
      return ExitCode.usage;
    }
    const confirm = { count: preview.count, selection: preview.selection };
    let outcome: BulkOutcome;
    try {
      outcome = await runBulk(backend.deps, { ...request, dryRun: false, confirm });
    } catch (error) {
      if (error instanceof BulkSelectionChanged)
        throw new CliError(
          `${error.message} (opflow bulk ${request.action} --dry-run shows it)`,
          ExitCode.jobFailed,
        );
      throw error;
    }
    if (reviewers) await reviewers.callSecondApprovers(ctx, backend.deps, undefined, approved);
    if (options.json) writeJson(ctx.io, { preview, outcome });
    else ctx.io.stdout.write(`${describeOutcome(outcome)}\n`);
    return outcome.skipped > 0 ? ExitCode.jobFailed : ExitCode.ok;
  } finally {
    await backend.close();
  }
}
