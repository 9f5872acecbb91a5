/**
 * `opflow batch <id> --download <dir>`: a batch's outputs and every report of its jobs copied into
 * one folder a person can open anywhere: `<dir>/index.html`, `summary.csv`, `summary.xlsx`, `results.jsonl`,
 * `failed.jsonl`, and `<dir>/reports/<jobId>/` (report.html, report.md, result.json, attachments;
 * `reports/<docket>_<jobId>/` for a disclosure form with a docket id).
 *
 * On AWS the index in the bucket links its reports relatively (`../../reports/<jobId>/report.html`),
 * which a presigned link to index.html alone cannot follow: every object needs a signature of its
 * own. The download reads each object through the report store (the SDK, with the caller's
 * credentials) and rewrites the report links of the text outputs and the workbook to the folder's layout, so
 * the downloaded index's links work offline, on either backend.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import type { Batch } from '../engine/batch-store';
import { isTerminal, type Job } from '../engine/job-record';
import { docketOf } from '../reports/disclosure-facts';
import { batchOutputKeys, type OutputDeps } from './outputs';
import { relinkWorkbook } from './workbook';

export interface DownloadOutcome {
  /** The folder written (absolute). */
  dir: string;
  /** The index page in it. */
  index: string;
  /** Jobs whose report files were copied. */
  reports: number;
  /** Every file written, outputs included. */
  files: number;
  /** Items not finished yet (no report to copy). */
  unfinished: number;
  /** Outputs or report files listed but not found in the store (reason by key). */
  missing: { key: string; reason: string }[];
}

/** Report files to copy: everything of a job's outputs but its intermediate step answers. */
function isReportFile(jobId: string, key: string): boolean {
  const prefix = `reports/${jobId}/`;
  return key.startsWith(prefix) && !key.startsWith(`${prefix}steps/`);
}

/**
 * The index, summary and results link reports relative to where they are in the store:
 * `../../reports/<jobId>/report.html` in the bucket, `../../<jobId>/report.html` in a local output
 * folder. In the download they are under `reports/<jobId>/`.
 */
export function rewriteReportLinks(text: string, folders: ReadonlyMap<string, string> = new Map()): string {
  return text.replace(
    /(?:\.\.\/)+(?:reports\/)?([A-Za-z0-9_-]+)\/report\.html/g,
    (_, jobId: string) => `reports/${folders.get(jobId) ?? jobId}/report.html`,
  );
}

/**
 * A job's folder in the download: `<docket>_<jobId>` when its disclosure form had a docket id (the
 * id made safe for any file system), else the job id.
 */
export function reportFolderName(job: Pick<Job, 'id' | 'metadata'>): string {
  const docket = docketOf(job)
    ?.replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[.-]+|[.-]+$/g, '')
    .slice(0, 60);
  return docket ? `${docket}_${job.id}` : job.id;
}

/** `target` inside `dir`, or an error: a key never writes outside the folder. */
function inside(dir: string, key: string): string {
  const target = resolve(dir, ...key.split('/'));
  const rel = relative(dir, target);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new Error(`key ${key} leaves ${dir}`);
  return target;
}

export async function downloadBatch(
  deps: OutputDeps,
  batch: Batch,
  dir: string,
  options: { concurrency?: number; onProgress?: (done: number) => void } = {},
): Promise<DownloadOutcome> {
  const root = resolve(dir);
  await mkdir(root, { recursive: true });
  const reports = deps.engine.reports;
  const outcome: DownloadOutcome = {
    dir: root,
    index: join(root, 'index.html'),
    reports: 0,
    files: 0,
    unfinished: 0,
    missing: [],
  };

  const copy = async (
    key: string,
    target: string,
    transform?: (text: string) => string,
    rewrite?: (body: Uint8Array) => Promise<Uint8Array>,
  ) => {
    const stored = await reports.get(key);
    if (!stored) {
      outcome.missing.push({ key, reason: 'not in the report store' });
      return false;
    }
    // Written beside and renamed: a file in the folder is whole or absent. A write that fails (a full
    // disk) leaves no partial file behind, and the error names the file it was writing.
    const partial = `${target}.partial`;
    try {
      await mkdir(dirname(target), { recursive: true });
      if (transform) {
        const out = createWriteStream(partial);
        // A write error (a full disk) ends the loop below, and finished() then throws it.
        let failed = false;
        out.on('error', () => {
          failed = true;
        });
        // Line by line, so a 100,000-row summary is never one string twice over.
        const decoder = new TextDecoder();
        const text = decoder.decode(stored.body);
        let from = 0;
        while (from < text.length && !failed) {
          const end = text.indexOf('\n', from);
          const line = end < 0 ? text.slice(from) : text.slice(from, end + 1);
          if (!out.write(transform(line))) await once(out, 'drain');
          from += line.length;
        }
        out.end();
        await finished(out);
      } else {
        await writeFile(partial, rewrite ? await rewrite(stored.body) : stored.body);
      }
      await rename(partial, target);
    } catch (error) {
      await rm(partial, { force: true }).catch(() => undefined);
      const failure = error as NodeJS.ErrnoException;
      if (typeof failure?.code === 'string' && (failure.path === undefined || failure.path === partial))
        failure.path = target;
      throw error;
    }
    outcome.files += 1;
    return true;
  };

  // Reports first, so an index written last never links a report that is not there yet.
  const folders = new Map<string, string>();
  const relink = (text: string) => rewriteReportLinks(text, folders);
  const pending = new Set<Promise<void>>();
  const limit = Math.max(1, options.concurrency ?? 8);
  let done = 0;
  let failure: unknown;
  for (let from = 0; ; ) {
    const page = await deps.batches.listItems(batch.id, from, 500);
    for (const item of page) {
      const job =
        item.seq < batch.admitted
          ? await deps.engine.store.findByIdempotencyKey(batch.tenant, item.key)
          : undefined;
      if (!job || !isTerminal(job.status)) {
        outcome.unfinished += 1;
        continue;
      }
      const keys = job.outputs.filter((key) => isReportFile(job.id, key));
      if (keys.length === 0) continue;
      const folder = reportFolderName(job);
      folders.set(job.id, folder);
      const prefix = `reports/${job.id}/`;
      const task = (async () => {
        let copied = 0;
        for (const key of keys)
          if (await copy(key, inside(root, `reports/${folder}/${key.slice(prefix.length)}`))) copied += 1;
        if (copied > 0) outcome.reports += 1;
        done += 1;
        options.onProgress?.(done);
      })().catch((error: unknown) => {
        failure ??= error;
      });
      pending.add(task);
      void task.then(() => pending.delete(task));
      if (pending.size >= limit) await Promise.race(pending);
      if (failure !== undefined) break;
    }
    if (failure !== undefined || page.length < 500) break;
    from = (page[page.length - 1]?.seq ?? from) + 1;
  }
  await Promise.all(pending);
  if (failure !== undefined) throw failure;

  const keys = batchOutputKeys(batch.id);
  await copy(keys.summary, join(root, 'summary.csv'), relink);
  await copy(keys.results, join(root, 'results.jsonl'), relink);
  await copy(keys.failed, join(root, 'failed.jsonl'));
  await copy(keys.index, join(root, 'index.html'), relink);
  await copy(keys.workbook, join(root, 'summary.xlsx'), undefined, (body) => relinkWorkbook(body, relink));
  return outcome;
}
