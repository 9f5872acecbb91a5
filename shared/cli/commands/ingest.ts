/**
 * `opflow ingest <path> --workflow <name>`: bulk ingestion of a JSON Lines or CSV manifest, or of a
 * folder of documents, as one batch; waits for it with a progress line unless --no-wait. On aws the
 * manifest (and the documents it names) is uploaded under `inbox/`, where the ingest function takes
 * over.
 */
import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { Batch, BatchOptions, BatchSource, BatchSourceKind } from '../../engine/batch-store';
import { isTerminal } from '../../engine/job-record';
import { errorMessage } from '../../errors/error-message';
import { defaultInFlightPerBatch, parseFailureBudget } from '../../ingest/batch';
import { viewOf } from '../../ingest/batch-view';
import { type DriveEnd, driveBatch, onlySelectionsLeft } from '../../ingest/drive-batch';
import { estimateBatch } from '../../ingest/estimate';
import {
  checkIngestRequest,
  type IngestDeps,
  type IngestPreview,
  IngestRefused,
  type IngestSource,
  openBatch,
  previewIngest,
} from '../../ingest/ingest';
import { localIngestSource, localSourceKind } from '../../ingest/local-source';
import { batchOutputKeys } from '../../ingest/outputs';
import { createBatchDisplay } from '../batch-display';
import { type CliContext, openBackend, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { formatDuration, selectionHelp } from '../format';
import { readConfigFile } from '../serve-extras';
import { emptySourceWarning, type IngestCommandOptions } from './ingest-options';
import { parseDuration, parsePriority, parseSelectionMode, requireWorkflow } from './run';

/** The source kind of a path (a folder, a .jsonl or .csv manifest); anything else is refused (exit 2). */
export async function sourceKindOf(path: string): Promise<BatchSourceKind> {
  return localSourceKind(path).catch(refusal);
}

function positiveInteger(value: string | undefined, option: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > max)
    throw new CliError(`${option} must be a whole number from 1 to ${max}, not "${value}"`, ExitCode.usage);
  return number;
}

export function batchOptionsFrom(options: IngestCommandOptions): BatchOptions {
  let failureBudget: BatchOptions['failureBudget'];
  try {
    failureBudget =
      options.failureBudget === undefined ? undefined : parseFailureBudget(options.failureBudget);
  } catch (error) {
    throw new CliError(errorMessage(error), ExitCode.usage);
  }
  return {
    selection: parseSelectionMode(options.select),
    deadlineMs: options.deadline === undefined ? undefined : parseDuration(options.deadline, '--deadline'),
    failureBudget,
    maxUnits: positiveInteger(options.maxUnits, '--max-units', 1e12),
    inFlight: positiveInteger(options.inFlight, '--in-flight', 1000) ?? defaultInFlightPerBatch,
    ...(options.priority === undefined ? {} : { priority: parsePriority(options.priority) }),
  };
}

export async function ingestCommand(
  ctx: CliContext,
  path: string,
  options: IngestCommandOptions,
): Promise<ExitCodeValue> {
  const startedAt = Date.now();
  requireWorkflow(ctx, options.workflow);
  try {
    checkIngestRequest(
      { tenant: options.tenant, batchName: options.batch },
      { tenant: '--tenant', batchName: '--batch' },
    );
  } catch (error) {
    refusal(error);
  }
  const batchOptions = batchOptionsFrom(options);
  const absolute = resolve(ctx.io.cwd, path);
  const kind = await sourceKindOf(absolute);
  if (options.backend === 'aws') {
    const { awsIngestCommand } = await import('./ingest-aws');
    return awsIngestCommand(ctx, absolute, kind, options, batchOptions);
  }
  const source: BatchSource = { kind, uri: absolute };
  // A bad line is named with its manifest (a document's position is its path already).
  const where = (position: string) => (kind === 'folder' ? position : `${path}, ${position}`);
  const request = {
    batchName: options.batch,
    tenant: options.tenant,
    workflow: options.workflow,
    options: batchOptions,
  };
  const input = localIngestSource(source);
  // Reading only (--dry-run, --no-wait) needs no workers and no built-in sandbox.
  const backend = await openBackend(ctx, options, options.dryRun || !options.wait ? 'records' : 'work');
  favourSmallHeap();
  try {
    const deps: IngestDeps = {
      engine: backend.deps,
      batches: await backend.batches(),
      disclosureForm: (await readConfigFile(ctx, undefined)).config.disclosureForm,
    };
    if (options.dryRun || batchOptions.maxUnits !== undefined) {
      const dryRun = await previewFirst(ctx, options, deps, input, request, { kind, path }, where);
      if (dryRun !== undefined) return dryRun;
    }
    const { batch: opened, state } = await openBatch(deps, source, request).catch(refusal);
    if (!options.quiet && !options.json)
      ctx.io.stderr.write(`opflow: ${openedLine(opened, state, path, options)}\n`);
    const existing = { done: 0, running: 0 };
    const here = backend.work.where === 'here' ? backend.work : undefined;
    const display = createBatchDisplay({
      stream: ctx.io.stderr,
      interactive: Boolean(ctx.io.stderr.isTTY) && !options.json,
      quiet: options.quiet || options.json,
    });
    const abort = new AbortController();
    const stopListening = ctx.io.onInterrupt(() => {
      if (abort.signal.aborted) process.exit(ExitCode.interrupted);
      display.note(
        'stopping (press Ctrl-C again to stop at once; nothing is lost: opflow ingest or opflow batch --watch continues)',
      );
      abort.abort(new Error('interrupted'));
    });
    let result: Awaited<ReturnType<typeof driveBatch>>;
    try {
      if (options.wait) here?.start();
      result = await driveBatch(deps, input, opened.id, {
        signal: abort.signal,
        allBatches: true,
        readOnly: !options.wait,
        stopAtSelection: true,
        wake: (listener) => backend.onJobChange(() => listener()),
        onProgress: (batch) => display.update(batch),
        onExisting: async (keys: string[]) => {
          for (const key of keys) {
            const job = await backend.deps.store.findByIdempotencyKey(options.tenant, key);
            if (job && isTerminal(job.status)) existing.done += 1;
            else existing.running += 1;
          }
        },
      });
    } finally {
      stopListening();
      display.stop();
      await here?.stop();
    }
    return await finish(ctx, options, deps, result, existing, startedAt, where, { kind, path });
  } finally {
    await backend.close();
  }
}

/**
 * --dry-run and --max-units read the source first: the dry run's exit code (it prints what it
 * found), or undefined to go on. A batch that would bill over --max-units is refused before it starts.
 */
async function previewFirst(
  ctx: CliContext,
  options: IngestCommandOptions,
  deps: IngestDeps,
  input: IngestSource,
  request: Parameters<typeof previewIngest>[2],
  source: { kind: BatchSourceKind; path: string },
  where: (position: string) => string,
): Promise<ExitCodeValue | undefined> {
  const preview = await previewIngest(deps, input, request).catch(refusal);
  // Items ingested before whose job finished are not run again: only the rest is estimated.
  const estimate = await estimateBatch(deps.engine.store, deps.engine.workflows, preview.toRun);
  if (options.dryRun) return printDryRun(ctx, options, source, preview, estimate, where);
  const max = request.options.maxUnits ?? 0;
  // The limit is the batch's: what it billed already counts against it.
  const billed = preview.billedBefore;
  if (estimate.billedUnits !== undefined && billed + estimate.billedUnits > max) {
    const toRun = Object.values(preview.toRun).reduce((sum, n) => sum + n, 0);
    throw new CliError(
      `not started: the batch would bill about ${estimate.billedUnits} units (${toRun} items to run${preview.items > toRun ? `, ${preview.items - toRun} done before` : ''}, from ${estimate.workflows.map((w) => `${w.basedOn} earlier ${w.workflow} jobs`).join(', ')})${billed > 0 ? ` on top of the ${billed} it billed already` : ''}, over --max-units ${max}`,
      ExitCode.jobFailed,
    );
  }
  return undefined;
}

/** What the command says as the batch opens. */
function openedLine(
  opened: Batch,
  state: Awaited<ReturnType<typeof openBatch>>['state'],
  path: string,
  options: IngestCommandOptions,
): string {
  return state === 'new'
    ? `batch ${opened.id}: ingesting ${path} (${options.workflow})`
    : state === 'resumed'
      ? `batch ${opened.id}: continuing the ingest from record ${opened.cursor.records + 1}`
      : `batch ${opened.id}: ingesting ${path} again (run ${opened.run}); lines ingested before are not started again`;
}

/**
 * Flat memory while a large manifest is read: every line makes short-lived garbage, and V8, sized
 * for the machine, lets the heap grow to hundreds of MB before it collects. `--optimize-for-size`
 * (read by V8's collector at each decision, so it takes effect when set at run time) makes it
 * collect early and keep the young generation small: a 100,000-line ingest then peaks within the
 * 150 MB budget (bench/ingest.md) at the cost of a little speed. Only this command sets it.
 */
function favourSmallHeap(): void {
  setFlagsFromString('--optimize-for-size');
}

function refusal(error: unknown): never {
  if (error instanceof IngestRefused) throw new CliError(error.message, ExitCode.usage);
  throw error;
}

function printDryRun(
  ctx: CliContext,
  options: IngestCommandOptions,
  source: { kind: BatchSourceKind; path: string },
  preview: IngestPreview,
  estimate: Awaited<ReturnType<typeof estimateBatch>>,
  where: (position: string) => string,
): ExitCodeValue {
  const { kind, path } = source;
  const exitCode = preview.problems.length > 0 ? ExitCode.jobFailed : ExitCode.ok;
  const empty = preview.items === 0 && preview.problems.length === 0;
  const warnings = empty ? [emptySourceWarning(kind, path)] : [];
  if (options.json) {
    writeJson(ctx.io, { dryRun: true, ...preview, estimate, warnings, exitCode });
    return exitCode;
  }
  for (const warning of warnings) ctx.io.stderr.write(`opflow: ${warning}\n`);
  const lines = [
    `dry run: ${preview.records} records, ${preview.items} usable${preview.existing > 0 ? ` (${preview.existing} ingested before: not started again; ${Object.values(preview.toRun).reduce((sum, n) => sum + n, 0)} to run)` : ''}, ${preview.problems.length} refused; nothing was started`,
  ];
  for (const problem of preview.problems)
    lines.push(`  ✖ ${where(problem.position)}${problem.id ? ` (id ${problem.id})` : ''}: ${problem.reason}`);
  for (const w of estimate.workflows) {
    lines.push(
      w.basedOn > 0
        ? `estimate for ${w.items} ${w.workflow} items: about ${plural(w.calls, 'call')} and ${w.billedUnits} billed units (${w.callsPerItem.toFixed(1)} calls and ${w.billedUnitsPerItem?.toFixed(1)} units per item, from ${w.basedOn} earlier jobs)`
        : `estimate for ${w.items} ${w.workflow} items: at least ${plural(w.calls, 'call')} (${plural(w.callsPerItem, 'step')} per item); billed units unknown (no earlier ${w.workflow} job to learn from)`,
    );
  }
  if (estimate.workflows.length > 1)
    lines.push(
      `in all: about ${plural(estimate.calls, 'call')}${estimate.billedUnits === undefined ? '' : `, ${estimate.billedUnits} billed units`}`,
    );
  ctx.io.stdout.write(`${lines.join('\n')}\n`);
  return exitCode;
}

async function finish(
  ctx: CliContext,
  options: IngestCommandOptions,
  deps: IngestDeps,
  result: { batch: Batch; end: DriveEnd },
  existing: { done: number; running: number },
  startedAt: number,
  where: (position: string) => string,
  source: { kind: BatchSourceKind; path: string },
): Promise<ExitCodeValue> {
  const { batch, end } = result;
  const view = viewOf(batch, Date.now());
  const warnings =
    view.thisRun.readingDone && emptyCounts(view.thisRun)
      ? [emptySourceWarning(source.kind, source.path)]
      : [];
  const index = await deps.engine.reports.link(batchOutputKeys(batch.id).index);
  const problems = await deps.batches.listProblems(batch.id, batch.run);
  const awaiting = end === 'awaiting' ? await onlySelectionsLeft(deps, batch) : [];
  const exitCode: ExitCodeValue =
    end === 'aborted'
      ? ExitCode.interrupted
      : awaiting.length > 0
        ? ExitCode.awaitingInput
        : end === 'stopped' || end === 'paused' || view.failures > 0
          ? ExitCode.jobFailed
          : ExitCode.ok;
  if (options.json) {
    writeJson(ctx.io, {
      batch: view,
      end,
      existing,
      problems: problems.map(({ position, record, id, reason }) => ({ position, record, id, reason })),
      warnings,
      index,
      ...(awaiting.length > 0
        ? {
            awaitingSelection: awaiting.map((job) => ({
              jobId: job.id,
              label: job.label,
              pending: job.pending,
            })),
          }
        : {}),
      exitCode,
    });
    return exitCode;
  }
  for (const warning of warnings) ctx.io.stderr.write(`opflow: ${warning}\n`);
  const t = view.totals;
  const lines = [
    `batch ${batch.id}: ${plural(view.thisRun.records, 'record')} read, ${plural(view.thisRun.created, 'new item')}${
      view.thisRun.existing > 0
        ? `, ${view.thisRun.existing} ingested before (${existing.done} already done, ${existing.running} still running)`
        : ''
    }, ${plural(view.thisRun.invalid, 'bad line')} (${formatDuration(Date.now() - startedAt)})`,
    `  items: ${t.succeeded} succeeded, ${t.failed} failed, ${t.cancelled} cancelled, ${t.running} running, ${t.waiting} waiting; ${view.calls} calls, ${view.billedUnits} billed units`,
  ];
  const shown = 50;
  for (const problem of problems.slice(0, shown))
    lines.push(`  ✖ ${where(problem.position)}${problem.id ? ` (id ${problem.id})` : ''}: ${problem.reason}`);
  if (problems.length > shown)
    lines.push(`  … and ${problems.length - shown} more bad lines in failed.jsonl`);
  if (batch.reason) lines.push(`  ${batch.status.toLowerCase()}: ${batch.reason}`);
  if (end === 'read')
    lines.push(`  not waiting (--no-wait): opflow batch ${batch.id} --watch runs and shows it`);
  if (end === 'aborted')
    lines.push(`  interrupted: opflow batch ${batch.id} --watch (or opflow ingest again) continues it`);
  if (awaiting.length > 0) {
    lines.push(
      `  ${plural(awaiting.length, 'item')} ${awaiting.length === 1 ? 'waits' : 'wait'} for a selection (select: manual) and nothing else is left to run; once answered, opflow batch ${batch.id} --watch finishes the batch:`,
    );
    for (const job of awaiting.slice(0, 10)) lines.push(indent(selectionHelp(job), '  '));
    if (awaiting.length > 10)
      lines.push(`  … and ${awaiting.length - 10} more: opflow list --status AWAITING_INPUT`);
  }
  if (view.thisRun.invalid > 0 || t.failed > 0)
    lines.push(
      `  bad lines and failed items, with where and why: ${index.replace(/index\.html$/, 'failed.jsonl')}`,
    );
  lines.push(`  summary: ${index}`);
  ctx.io.stdout.write(`${lines.join('\n')}\n`);
  return exitCode;
}

const emptyCounts = (counts: { created: number; existing: number; invalid: number }) =>
  counts.created + counts.existing + counts.invalid === 0;

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

const indent = (text: string, by: string) =>
  text
    .split('\n')
    .map((line) => `${by}${line}`)
    .join('\n');
