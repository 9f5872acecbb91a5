/**
 * `opflow batch [batchId] [--watch] [--redrive]`: the batches, or one batch with its totals by
 * status, calls, billed units, elapsed time and ETA; `--watch` follows it live (and locally runs it:
 * its items are released and its jobs worked here); `--redrive` runs its failed and cancelled items
 * again, each from the step it failed at (`--from-start`: from its first step; `--deadline 2h`: a new
 * deadline, what helps items that failed on theirs); `--download <dir>` copies its outputs and every report into
 * a folder whose index links work offline (on AWS the bucket's relative links need a signature each).
 */
import { resolve } from 'node:path';
import type { Batch, BatchStore } from '../../engine/batch-store';
import { maxDeadlineMs } from '../../engine/job-commands';
import type { JobStore } from '../../engine/ports';
import { describeUpstreamIdentity } from '../../engine/upstream-identity';
import { describeFileError } from '../../files/bounded-read';
import { currentViewOf } from '../../ingest/batch-view';
import { type DownloadOutcome, downloadBatch } from '../../ingest/download';
import { batchSettled, driveBatch, onlySelectionsLeft } from '../../ingest/drive-batch';
import type { IngestDeps } from '../../ingest/ingest';
import { LimitRefused, setMaxUnits } from '../../ingest/limits';
import { batchOutputKeys } from '../../ingest/outputs';
import { redriveBatch } from '../../ingest/redrive';
import type { Backend } from '../../runtime/backend';
import { createBatchDisplay, describeProgress } from '../batch-display';
import { openBatchFeed } from '../batch-feed';
import { type CliContext, type GlobalOptions, openBackend, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { countOf, formatDuration, formatTable, printable, selectionHelp, upstreamShort } from '../format';
import { parseDuration } from './run';

export interface BatchCommandOptions extends GlobalOptions {
  watch?: boolean | undefined;
  redrive?: boolean | undefined;
  /** With --redrive: from each item's first step; a new deadline for each (a duration, e.g. 2h). */
  fromStart?: boolean | undefined;
  deadline?: string | undefined;
  maxUnits?: string | undefined;
  download?: string | undefined;
  limit: string;
}

export async function batchCommand(
  ctx: CliContext,
  batchId: string | undefined,
  options: BatchCommandOptions,
): Promise<ExitCodeValue> {
  const redriveDeadlineMs = checkBatchFlags(batchId, options);
  const working = Boolean(
    batchId && (options.watch || options.redrive || options.maxUnits) && options.backend === 'local',
  );
  const backend = await openBackend(ctx, options, working ? 'work' : 'records');
  try {
    const batches = await backend.batches();
    if (!batchId) return await listBatches(ctx, options, backend, batches);
    let batch = await batches.get(batchId);
    if (!batch) throw new CliError(`no batch ${batchId} (opflow batch lists them)`, ExitCode.notFound);
    const deps: IngestDeps = { engine: backend.deps, batches };
    batch = await changeBatch(ctx, options, backend, deps, batch, redriveDeadlineMs);
    if (options.watch || options.redrive || options.maxUnits !== undefined) {
      const watched = await watchBatch(ctx, options, backend, deps, batch.id);
      batch = watched.batch;
      if (watched.exitCode !== undefined) return show(ctx, options, backend, batch, watched.exitCode);
    }
    const download = options.download
      ? await downloadTo(ctx, options, deps, batch, options.download)
      : undefined;
    if (download && !options.json && !options.quiet && ctx.io.stderr.isTTY) ctx.io.stderr.write('\n');
    return show(ctx, options, backend, batch, undefined, download);
  } finally {
    await backend.close();
  }
}

/** Flags that go together, checked before a backend is opened; the --redrive deadline if given. */
function checkBatchFlags(batchId: string | undefined, options: BatchCommandOptions): number | undefined {
  if (options.download !== undefined && !batchId)
    throw new CliError(
      '--download needs a batch id: opflow batch <batchId> --download <dir>',
      ExitCode.usage,
    );
  if (options.download !== undefined && options.download.trim() === '')
    throw new CliError('--download needs a folder: opflow batch <batchId> --download <dir>', ExitCode.usage);
  if ((options.fromStart || options.deadline !== undefined) && !options.redrive)
    throw new CliError(
      `${options.fromStart ? '--from-start' : '--deadline'} goes with --redrive: opflow batch <batchId> --redrive ${options.fromStart ? '--from-start' : `--deadline ${options.deadline}`}`,
      ExitCode.usage,
    );
  return options.deadline === undefined
    ? undefined
    : parseDuration(options.deadline, '--deadline', { maxMs: maxDeadlineMs, maxText: '366d' });
}

/** `opflow batch` without an id: the latest batches, as a table or JSON. */
async function listBatches(
  ctx: CliContext,
  options: BatchCommandOptions,
  backend: Backend,
  batches: BatchStore,
): Promise<ExitCodeValue> {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new CliError(`--limit must be a whole number, not "${options.limit}"`, ExitCode.usage);
  const page = await batches.list({ limit });
  const now = Date.now();
  if (!options.json && page.batches.length === 0) {
    ctx.io.stdout.write('no batches yet: opflow ingest <manifest or folder> --workflow <name> starts one\n');
    return ExitCode.ok;
  }
  const views = await Promise.all(page.batches.map((batch) => currentViewOf(backend.deps.store, batch, now)));
  if (options.json) {
    writeJson(ctx.io, { batches: views });
    return ExitCode.ok;
  }
  ctx.io.stdout.write(
    `${formatTable(
      ['batch', 'status', 'workflow', 'items', 'succeeded', 'failed', 'waiting', 'created', 'upstream'],
      page.batches.map((batch, index) => {
        const view = views[index]!;
        return [
          batch.id,
          view.status,
          batch.workflow,
          String(batch.items),
          String(view.totals.succeeded),
          String(view.totals.failed + view.totals.cancelled),
          String(view.totals.waiting + view.totals.running),
          view.createdAt,
          view.upstreams.length === 0 ? '-' : view.upstreams.map(upstreamShort).join(' + '),
        ];
      }),
    )}\n`,
  );
  // The same words as `opflow list`: a sandbox batch's results are not real publications.
  if (views.some((view) => view.sandbox))
    ctx.io.stdout.write('(upstream sandbox: simulated data, not real publications)\n');
  return ExitCode.ok;
}

/**
 * `--max-units` and `--redrive`: the batch changed as asked. On aws the ingest function follows a
 * batch, and a batch it saw settle is handed back to it.
 */
async function changeBatch(
  ctx: CliContext,
  options: BatchCommandOptions,
  backend: Backend,
  deps: IngestDeps,
  batch: Batch,
  redriveDeadlineMs: number | undefined,
): Promise<Batch> {
  const batchId = batch.id;
  const changes = options.redrive || options.maxUnits !== undefined;
  const say = (line: string) => {
    if (!options.json && !options.quiet) ctx.io.stderr.write(`opflow: batch ${batchId}: ${line}\n`);
  };
  let changed = batch;
  if (options.maxUnits !== undefined) {
    const maxUnits = Number(options.maxUnits);
    if (!Number.isInteger(maxUnits) || maxUnits < 1)
      throw new CliError(
        `--max-units must be a whole number from 1, not "${options.maxUnits}"`,
        ExitCode.usage,
      );
    const before = changed.status;
    try {
      changed = await setMaxUnits(deps.batches, batchId, maxUnits, () => backend.deps.clock.now());
    } catch (error) {
      if (error instanceof LimitRefused) throw new CliError(error.message, ExitCode.usage);
      throw error;
    }
    say(
      `--max-units is now ${maxUnits}${before === 'PAUSED' && changed.status !== 'PAUSED' ? '; it continues where it paused' : ''}`,
    );
  }
  if (options.redrive) {
    const outcome = await redriveBatch(deps, batchId, {
      fromStart: options.fromStart,
      deadlineMs: redriveDeadlineMs,
    });
    say(
      `running ${countOf(outcome.retried.length, 'failed or cancelled item')} again${options.fromStart ? ' from their first step' : ''}${options.deadline === undefined ? '' : ` with a deadline of ${options.deadline}`}${outcome.refused.length ? ` (${outcome.refused.length} could not be: ${outcome.refused.map((r) => `${r.jobId}: ${r.reason}`).join('; ')})` : ''}`,
    );
    changed = outcome.batch;
  }
  // On aws the ingest function follows it again, within a minute (the sweeper's pass).
  if (changes && backend.work.where === 'elsewhere') await backend.work.inbox.handBack(batchId);
  return changed;
}

/**
 * Follows the batch live until it settles: locally it also runs it (its items released and its jobs
 * worked here); on aws the functions do, and this only looks. An exit code when the watch ended
 * early: interrupted, or only selections left to answer (printed).
 */
async function watchBatch(
  ctx: CliContext,
  options: BatchCommandOptions,
  backend: Backend,
  deps: IngestDeps,
  batchId: string,
): Promise<{ batch: Batch; exitCode?: ExitCodeValue | undefined }> {
  const here = backend.work.where === 'here' ? backend.work : undefined;
  const display = createBatchDisplay({
    stream: ctx.io.stderr,
    interactive: Boolean(ctx.io.stderr.isTTY) && !options.json,
    quiet: options.quiet || options.json,
  });
  const feed = await openBatchFeed(backend, batchId, (line) => display.note(`batch ${batchId}: ${line}`));
  const abort = new AbortController();
  const stopListening = ctx.io.onInterrupt(() => abort.abort(new Error('interrupted')));
  try {
    here?.start();
    const result = await driveBatch(deps, undefined, batchId, {
      signal: abort.signal,
      allBatches: Boolean(here),
      // On aws the functions release and run the items: only look.
      observe: !here,
      roundMs: feed.roundMs,
      wake: feed.wake,
      onProgress: (current) => {
        const view = feed.latest();
        if (view) display.show(view);
        else display.update(current);
      },
      stopAtSelection: true,
    });
    const batch = result.batch;
    if (result.end === 'aborted') return { batch, exitCode: ExitCode.interrupted };
    if (result.end === 'awaiting') {
      const awaiting = await onlySelectionsLeft(deps, batch);
      if (!options.json)
        for (const job of awaiting.slice(0, 10)) ctx.io.stdout.write(`${selectionHelp(job)}\n`);
      if (awaiting.length > 0) return { batch, exitCode: ExitCode.awaitingInput };
    }
    return { batch };
  } finally {
    feed.stop();
    stopListening();
    display.stop();
    await here?.stop();
  }
}

/** `--download <dir>`: the batch's outputs and reports copied; a write that fails names the path. */
async function downloadTo(
  ctx: CliContext,
  options: BatchCommandOptions,
  deps: IngestDeps,
  batch: Batch,
  dir: string,
): Promise<DownloadOutcome> {
  return downloadBatch(deps, batch, resolve(ctx.io.cwd, dir), {
    onProgress: (done) => {
      if (!options.json && !options.quiet && ctx.io.stderr.isTTY)
        ctx.io.stderr.write(`\ropflow: downloading reports: ${done}`);
    },
  }).catch((error: unknown) => {
    // A folder that cannot be made or written, a full disk: said with the flag and the path.
    const failure = error as NodeJS.ErrnoException;
    if (typeof failure?.code !== 'string') throw error;
    const where = failure.path ?? resolve(ctx.io.cwd, dir);
    const full = failure.code === 'ENOSPC' || failure.code === 'EDQUOT';
    const reason = full ? 'the disk is full' : describeFileError(error);
    throw new CliError(
      `--download ${dir}: cannot write ${where}: ${reason} (${failure.code}); the files written so far are whole and kept (no partial file is left), and the batch is unchanged: run it again once there is room`,
      full ? ExitCode.environment : ExitCode.usage,
    );
  });
}

async function show(
  ctx: CliContext,
  options: BatchCommandOptions,
  backend: { deps: { reports: { link(key: string): Promise<string> }; store: JobStore } },
  batch: Batch,
  forced: ExitCodeValue | undefined,
  download?: DownloadOutcome | undefined,
): Promise<ExitCodeValue> {
  const view = await currentViewOf(backend.deps.store, batch, Date.now());
  const index = await backend.deps.reports.link(batchOutputKeys(batch.id).index);
  const exitCode =
    forced ??
    (view.failures > 0 || batch.status === 'STOPPED' || batch.status === 'PAUSED'
      ? ExitCode.jobFailed
      : ExitCode.ok);
  if (options.json) {
    writeJson(ctx.io, { ...view, index, ...(download ? { download } : {}), exitCode });
    return exitCode;
  }
  const t = view.totals;
  const lines = [
    `batch ${batch.id} (${batch.workflow}, ${printable(batch.source.uri)})`,
    `  status: ${view.status}${view.writingOutputs ? ', writing outputs' : ''}${batch.reason ? `: ${printable(batch.reason)}` : ''}`,
    `  items: ${batch.items}: ${t.succeeded} succeeded, ${t.failed} failed, ${t.cancelled} cancelled, ${t.running} running, ${t.waiting} waiting`,
    `  run ${batch.run}: ${countOf(view.thisRun.records, 'record')} read${view.thisRun.readingDone ? '' : ' so far'}, ${countOf(view.thisRun.created, 'new item')}, ${view.thisRun.existing} ingested before, ${countOf(view.thisRun.invalid, 'bad line')}`,
    `  ${countOf(view.calls, 'call')}, ${countOf(view.billedUnits, 'billed unit')}, elapsed ${formatDuration(view.elapsedMs)}${view.etaMs !== undefined ? `, ETA ${formatDuration(view.etaMs)}` : ''}`,
    `  now: ${describeProgress(view)}`,
    ...(view.upstreams.length > 0
      ? [`  upstream: ${view.upstreams.map(describeUpstreamIdentity).join('; ')}`]
      : []),
    `  summary: ${view.writingOutputs ? `being written (${index} once done)` : view.outputsAt === undefined ? 'not written yet' : index}`,
  ];
  if (download) lines.push(...describeDownload(download));
  if (!batchSettled(batch) && batch.status !== 'FINISHED')
    lines.push(
      `  opflow batch ${batch.id} --watch follows it${options.backend === 'local' ? ' (and runs it here)' : ''}`,
    );
  if (t.failed + t.cancelled > 0)
    lines.push(`  opflow batch ${batch.id} --redrive runs the failed and cancelled items again`);
  ctx.io.stdout.write(`${lines.join('\n')}\n`);
  return exitCode;
}

/** The lines `--download` adds to a batch's text: what was copied, what is not finished or missing. */
export function describeDownload(download: DownloadOutcome): string[] {
  const lines = [
    `  downloaded to ${download.dir}: ${countOf(download.reports, 'report')}, ${countOf(download.files, 'file')}; open ${download.index}`,
  ];
  if (download.unfinished > 0)
    lines.push(
      `  ${countOf(download.unfinished, 'item')} not finished yet: download again once ${download.unfinished === 1 ? 'it is' : 'they are'}`,
    );
  for (const missing of download.missing)
    lines.push(`  not downloaded: ${printable(missing.key)} (${printable(missing.reason)})`);
  return lines;
}
