/**
 * `opflow --backend aws ingest <path>`: uploads the manifest (and the documents its lines name), or
 * every document of a folder, under `inbox/<workflow>/<batch>/` in the report bucket (`inbox/tenants/<tenant>/<workflow>/<batch>/` for a tenant other than `default`: the tenant is the prefix written to), where the S3
 * event notification starts the ingest function; with OPFLOW_INGEST_QUEUE_URL set it also announces
 * the uploads itself (emulators send no S3 events; a repeat is harmless). Then it follows the batch
 * unless --no-wait.
 */
import { basename, dirname, join } from 'node:path';
import type { BatchOptions, BatchSourceKind } from '../../engine/batch-store';
import { describeFileError, FileRefused, readRegularFile } from '../../files/bounded-read';
import { batchIdFor } from '../../ingest/batch';
import { viewOf } from '../../ingest/batch-view';
import { maxDocumentBytes } from '../../ingest/documents';
import { batchSettled, driveBatch } from '../../ingest/drive-batch';
import { inboxFolderOf, inboxMetadataFor } from '../../ingest/inbox';
import { insideFolder } from '../../ingest/local-source';
import { openFile, readCsv, readFolder, readJsonLines, type SourceRecord } from '../../ingest/sources';
import type { Inbox } from '../../runtime/backend';
import { createBatchDisplay } from '../batch-display';
import { type CliContext, openBackend, writeJson } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { emptySourceWarning, type IngestCommandOptions } from './ingest-options';

/** The largest manifest uploaded whole (S3's single PUT takes up to 5 GB; a manifest is far smaller). */
const maxManifestBytes = 1024 * 1024 * 1024;

/** A local file to upload, under the bounded-read rule (a document at most the ingest's limit). */
async function readLocal(path: string, shownAs: string, maxBytes = maxDocumentBytes): Promise<Uint8Array> {
  return new Uint8Array(await readRegularFile(path, { maxBytes, shownAs }));
}

export async function awsIngestCommand(
  ctx: CliContext,
  path: string,
  kind: BatchSourceKind,
  options: IngestCommandOptions,
  batchOptions: BatchOptions,
): Promise<ExitCodeValue> {
  if (options.dryRun)
    throw new CliError(
      '--dry-run reads the manifest where it is: run it without --backend aws',
      ExitCode.usage,
    );
  const batchId = batchIdFor({ kind, uri: path }, options.tenant, options.batch);
  const backend = await openBackend(ctx, options, 'records');
  try {
    if (backend.work.where !== 'elsewhere')
      throw new CliError('this upload is for a backend whose ingest runs in the cloud', ExitCode.usage);
    const { inbox } = backend.work;
    const prefix = inboxFolderOf(options.tenant, options.workflow, batchId);
    const metadata = inboxMetadataFor(options.tenant, batchId, batchOptions);
    const queueUrl = ctx.io.env.OPFLOW_INGEST_QUEUE_URL?.trim() || undefined;
    const announce: { key: string; etag?: string | undefined }[] = [];
    const upload = async (key: string, body: Uint8Array, meta: Record<string, string>, start: boolean) => {
      const { etag } = await inbox.put(key, body, meta);
      if (start) announce.push({ key, etag });
    };
    let uploaded = 0;
    // Records (and documents) found: none means the wrong file, or an export that failed.
    let found = 0;
    // Documents of a folder that are not uploaded (over 50 MB, not a regular file): said, the rest go on.
    const problems: { document: string; reason: string }[] = [];
    if (kind === 'folder') {
      for await (const record of readFolder(path)) {
        found += 1;
        const document = record.document ?? '';
        let body: Uint8Array;
        try {
          body = await readLocal(join(path, document), document);
        } catch (error) {
          if (!(error instanceof FileRefused)) throw error;
          problems.push({ document, reason: describeFileError(error) });
          continue;
        }
        await upload(`${prefix}${document}`, body, metadata, true);
        uploaded += 1;
      }
    } else {
      // The documents the lines name first, so they are there when the function reads the manifest.
      const records: AsyncIterable<SourceRecord> =
        kind === 'jsonl' ? readJsonLines(openFile(path)) : readCsv(openFile(path));
      const named = new Set<string>();
      for await (const record of records) {
        if (record.value !== undefined || record.error !== undefined) found += 1;
        const file = record.value?.file;
        if (
          typeof file !== 'string' ||
          named.has(file) ||
          /^([\\/]|[A-Za-z]:)/.test(file) ||
          file.split(/[\\/]/).includes('..')
        )
          continue;
        named.add(file);
        try {
          await upload(
            `${prefix}${file}`,
            await readLocal(await insideFolder(dirname(path), file, 'manifest'), file),
            { ...metadata, 'opflow-role': 'manifest-file' },
            false,
          );
          uploaded += 1;
        } catch {
          // A missing document is the function's to report, on its line.
        }
      }
      await upload(
        `${prefix}${basename(path)}`,
        await readLocal(path, path, maxManifestBytes),
        metadata,
        true,
      );
      uploaded += 1;
    }
    if (queueUrl) for (const upload of announce) await inbox.announce(queueUrl, upload);
    const warnings = found === 0 ? [emptySourceWarning(kind, path)] : [];
    if (!options.json) for (const warning of warnings) ctx.io.stderr.write(`opflow: ${warning}\n`);
    if (!options.json)
      for (const problem of problems)
        ctx.io.stderr.write(`opflow: ${problem.document}: not uploaded: ${problem.reason}\n`);
    if (!options.quiet && !options.json)
      ctx.io.stderr.write(
        `opflow: uploaded ${uploaded} object${uploaded === 1 ? '' : 's'} to ${inbox.location}${prefix}; batch ${batchId} starts there\n`,
      );
    if (!options.wait) {
      if (options.json)
        writeJson(ctx.io, {
          batchId,
          uploaded,
          prefix: `${inbox.location}${prefix}`,
          warnings,
          problems,
          exitCode: problems.length > 0 ? ExitCode.jobFailed : ExitCode.ok,
        });
      return problems.length > 0 ? ExitCode.jobFailed : ExitCode.ok;
    }
    const batches = await backend.batches();
    const display = createBatchDisplay({
      stream: ctx.io.stderr,
      interactive: Boolean(ctx.io.stderr.isTTY) && !options.json,
      quiet: options.quiet || options.json,
    });
    const abort = new AbortController();
    const stop = ctx.io.onInterrupt(() => abort.abort(new Error('interrupted')));
    try {
      // The function creates the batch when it reads the upload: a function that does not is said.
      await waitForBatchStart({
        batches,
        batchId,
        signal: abort.signal,
        unread: unreadOf(inbox, queueUrl),
      });
      const result = await driveBatch({ engine: backend.deps, batches }, undefined, batchId, {
        observe: true,
        signal: abort.signal,
        roundMs: 2_000,
        onProgress: (batch) => display.update(batch),
      });
      const view = viewOf(result.batch, Date.now());
      const exitCode: ExitCodeValue =
        result.end === 'aborted'
          ? ExitCode.interrupted
          : problems.length > 0 ||
              view.failures > 0 ||
              !batchSettled(result.batch) ||
              result.batch.status !== 'FINISHED'
            ? ExitCode.jobFailed
            : ExitCode.ok;
      if (options.json) writeJson(ctx.io, { batch: view, end: result.end, warnings, problems, exitCode });
      else
        ctx.io.stdout.write(
          `batch ${batchId}: ${view.totals.succeeded} succeeded, ${view.totals.failed} failed, ${view.thisRun.invalid} bad lines; outputs in ${inbox.location}batches/${batchId}/\n`,
        );
      return exitCode;
    } finally {
      stop();
      display.stop();
    }
  } finally {
    await backend.close();
  }
}

/** How long an announced upload may wait unread before the command says no ingest function runs. */
const unreadLimitMs = 10_000;
/** How long an upload may wait for its batch when S3 announces it (a deployed stack). */
const startLimitMs = 90_000;

/** The ingest queue's unread messages, when the command announces its uploads there itself. */
function unreadOf(inbox: Inbox, queueUrl: string | undefined) {
  if (!queueUrl) return undefined;
  return async () => ({ queueUrl, count: await inbox.unread(queueUrl) });
}

/**
 * Waits until the ingest function has created the batch; fails within seconds when nothing reads the
 * ingest queue (its messages stay unread for 10 s), and after 90 s when S3 announces the uploads and
 * no batch appears. The uploads stay: the batch starts whenever a function reads them.
 */
async function waitForBatchStart(options: {
  batches: { get(id: string): Promise<unknown> };
  batchId: string;
  signal: AbortSignal;
  unread: (() => Promise<{ queueUrl: string; count: number }>) | undefined;
}): Promise<void> {
  const { batches, batchId, signal, unread } = options;
  const startedAt = Date.now();
  while (!(await batches.get(batchId)) && !signal.aborted) {
    const waited = Date.now() - startedAt;
    const later = `the uploads are kept, and the batch starts when an ingest function reads them (opflow --backend aws batch ${batchId} follows it then)`;
    if (unread && waited >= unreadLimitMs) {
      const { queueUrl, count } = await unread();
      if (count > 0)
        throw new CliError(
          `no ingest function is consuming the ingest queue (${queueUrl.split('/').pop()}, OPFLOW_INGEST_QUEUE_URL): ${count} message${count === 1 ? '' : 's'} unread after ${Math.round(waited / 1000)} s. Start \`npm run aws-local\` (it runs the ingest function), or deploy the stack's ingest function; ${later}`,
          ExitCode.environment,
        );
    }
    if (!unread && waited >= startLimitMs)
      throw new CliError(
        `batch ${batchId} did not start within ${startLimitMs / 1000} s of its upload: no ingest function read it. Check the stack's ingest function (its logs, its event source on the ingest queue) and the bucket's event notification for inbox/; ${later}`,
        ExitCode.environment,
      );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
