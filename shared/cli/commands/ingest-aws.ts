/**
 * `opflow --backend aws ingest <path>`: uploads the manifest (and the documents its lines name), or
 * every document of a folder, under `inbox/<workflow>/<batch>/` in the report bucket
 * (`inbox/tenants/<tenant>/<workflow>/<batch>/` for a tenant other than `default`: the tenant is the
 * prefix written to), where the bucket's event notification invokes the ingest function, as for the
 * dashboard's uploads: one way in, whoever uploads, and the command needs no right beyond writing
 * under `inbox/` and reading the table. Then it follows the batch unless --no-wait.
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
    // One read of the job table before anything is uploaded, when this command will follow the
    // batch: a table that is not there is named now (aws-reachability.ts), not after the uploads,
    // which would start a batch nobody follows. With --no-wait the command never reads the table.
    if (options.wait) await backend.deps.store.get(batchId);
    const prefix = inboxFolderOf(options.tenant, options.workflow, batchId);
    const uploads = new InboxUploads(inbox, prefix, inboxMetadataFor(options.tenant, batchId, batchOptions));
    if (kind === 'folder') await uploads.folder(path);
    else await uploads.manifest(path, kind);
    const warnings = uploads.found === 0 ? [emptySourceWarning(kind, path)] : [];
    const { uploaded, problems } = uploads;
    if (!options.json) {
      for (const warning of warnings) ctx.io.stderr.write(`opflow: ${warning}\n`);
      for (const problem of problems)
        ctx.io.stderr.write(`opflow: ${problem.document}: not uploaded: ${problem.reason}\n`);
    }
    if (!options.quiet && !options.json)
      ctx.io.stderr.write(
        `opflow: uploaded ${uploaded} object${uploaded === 1 ? '' : 's'} to ${inbox.location}${prefix}; batch ${batchId} starts there\n`,
      );
    const exitCode = problems.length > 0 ? ExitCode.jobFailed : ExitCode.ok;
    if (options.wait) return await followBatch(ctx, backend, batchId, uploads, { options, warnings });
    if (options.json)
      writeJson(ctx.io, {
        batchId,
        uploaded,
        prefix: `${inbox.location}${prefix}`,
        warnings,
        problems,
        exitCode,
      });
    return exitCode;
  } finally {
    await backend.close();
  }
}

/** The uploads of one batch under its inbox folder, and what they found. */
class InboxUploads {
  /** Objects uploaded. */
  uploaded = 0;
  /** Records (and documents) found: none means the wrong file, or an export that failed. */
  found = 0;
  /** Documents of a folder that are not uploaded (over 50 MB, not a regular file): said, the rest go on. */
  readonly problems: { document: string; reason: string }[] = [];
  /** The uploads that start the batch (not the files a manifest names): the function must receive one. */
  readonly starts: { key: string; etag?: string | undefined }[] = [];

  constructor(
    readonly inbox: Inbox,
    private readonly prefix: string,
    private readonly metadata: Record<string, string>,
  ) {}

  private async put(name: string, body: Uint8Array, meta: Record<string, string>, start: boolean) {
    const key = `${this.prefix}${name}`;
    const { etag } = await this.inbox.put(key, body, meta);
    if (start) this.starts.push({ key, etag });
    this.uploaded += 1;
  }

  /** Every document of a folder, each one an upload that starts (or joins) the batch. */
  async folder(path: string): Promise<void> {
    for await (const record of readFolder(path)) {
      this.found += 1;
      const document = record.document ?? '';
      let body: Uint8Array;
      try {
        body = await readLocal(join(path, document), document);
      } catch (error) {
        if (!(error instanceof FileRefused)) throw error;
        this.problems.push({ document, reason: describeFileError(error) });
        continue;
      }
      await this.put(document, body, this.metadata, true);
    }
  }

  /** The documents the lines name first, so they are there when the function reads the manifest; then the manifest. */
  async manifest(path: string, kind: BatchSourceKind): Promise<void> {
    const records: AsyncIterable<SourceRecord> =
      kind === 'jsonl' ? readJsonLines(openFile(path)) : readCsv(openFile(path));
    const named = new Set<string>();
    for await (const record of records) {
      if (record.value !== undefined || record.error !== undefined) this.found += 1;
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
        const body = await readLocal(await insideFolder(dirname(path), file, 'manifest'), file);
        await this.put(file, body, { ...this.metadata, 'opflow-role': 'manifest-file' }, false);
      } catch {
        // A missing document is the function's to report, on its line.
      }
    }
    await this.put(basename(path), await readLocal(path, path, maxManifestBytes), this.metadata, true);
  }
}

/** Follows the batch the uploads start until it settles (or the command is interrupted); its exit code. */
async function followBatch(
  ctx: CliContext,
  backend: Awaited<ReturnType<typeof openBackend>>,
  batchId: string,
  uploads: InboxUploads,
  shown: { options: IngestCommandOptions; warnings: string[] },
): Promise<ExitCodeValue> {
  const { options, warnings } = shown;
  const { inbox, problems, starts } = uploads;
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
      received: starts.length > 0 ? () => anyReceived(inbox, starts) : undefined,
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
}

/** How long an upload may wait for the ingest function to receive its event before the command says so. */
const receiveLimitMs = 20_000;

/** Whether the ingest function received the event of any of these uploads. */
async function anyReceived(inbox: Inbox, uploads: { key: string; etag?: string | undefined }[]) {
  for (const upload of uploads) if (await inbox.received(upload)) return true;
  return false;
}

/**
 * Waits until the ingest function has created the batch. An upload's event reaches the function
 * within a second or two; when 20 s pass with neither the batch nor the upload's entry in the ingest
 * schedule, no function received it, and the command says so. The uploads stay: the batch starts
 * whenever the function reads them.
 */
async function waitForBatchStart(options: {
  batches: { get(id: string): Promise<unknown> };
  batchId: string;
  signal: AbortSignal;
  received: (() => Promise<boolean>) | undefined;
}): Promise<void> {
  const { batches, batchId, signal, received } = options;
  const startedAt = Date.now();
  let seen = false;
  while (!(await batches.get(batchId)) && !signal.aborted) {
    const waited = Date.now() - startedAt;
    if (received && !seen && waited >= receiveLimitMs) {
      seen = await received();
      if (!seen)
        throw new CliError(
          `batch ${batchId}: no ingest function received the upload within ${receiveLimitMs / 1000} s. ` +
            "Check the report bucket's event notification for inbox/ and the stack's ingest function (its logs, its errors alarm), " +
            `or start \`npm run aws-local\`, which runs it; the uploads are kept, and the batch starts when the function reads them (opflow --backend aws batch ${batchId} follows it then)`,
          ExitCode.environment,
        );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
