/**
 * `opflow batch <id> --download <dir>`: a batch's outputs and every report of its jobs copied into
 * one folder a person can open anywhere: `<dir>/index.html`, `summary.csv`, `results.jsonl`,
 * `failed.jsonl`, and `<dir>/reports/<jobId>/` (report.html, report.md, result.json, attachments).
 *
 * On AWS the index in the bucket links its reports relatively (`../../reports/<jobId>/report.html`),
 * which a presigned link to index.html alone cannot follow: every object needs a signature of its
 * own. The download reads each object through the report store (the SDK, with the caller's
 * credentials) and rewrites the report links of the three text outputs to the folder's layout, so
 * the downloaded index's links work offline, on either backend.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import type { Batch } from '../engine/batch-store';
import { isTerminal } from '../engine/job-record';
import { batchOutputKeys, type OutputDeps } from './outputs';

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
export function rewriteReportLinks(text: string): string {
  return text.replace(/(?:\.\.\/)+(?:reports\/)?([A-Za-z0-9_-]+)\/report\.html/g, 'reports/$1/report.html');
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

  const copy = async (key: string, target: string, transform?: (text: string) => string) => {
    const stored = await reports.get(key);
    if (!stored) {
      outcome.missing.push({ key, reason: 'not in the report store' });
      return false;
    }
    await mkdir(dirname(target), { recursive: true });
    // Written beside and renamed: a file in the folder is whole or absent.
    const partial = `${target}.partial`;
    if (transform) {
      const out = createWriteStream(partial);
      // Line by line, so a 100,000-row summary is never one string twice over.
      const decoder = new TextDecoder();
      const text = decoder.decode(stored.body);
      let from = 0;
      while (from < text.length) {
        const end = text.indexOf('\n', from);
        const line = end < 0 ? text.slice(from) : text.slice(from, end + 1);
        if (!out.write(transform(line))) await new Promise<void>((done) => out.once('drain', () => done()));
        from += line.length;
      }
      out.end();
      await finished(out);
    } else {
      await writeFile(partial, stored.body);
    }
    await rename(partial, target);
    outcome.files += 1;
    return true;
  };

  // Reports first, so an index written last never links a report that is not there yet.
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
      const task = (async () => {
        let copied = 0;
        for (const key of keys) if (await copy(key, inside(root, key))) copied += 1;
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
  await copy(keys.summary, join(root, 'summary.csv'), rewriteReportLinks);
  await copy(keys.results, join(root, 'results.jsonl'), rewriteReportLinks);
  await copy(keys.failed, join(root, 'failed.jsonl'));
  await copy(keys.index, join(root, 'index.html'), rewriteReportLinks);
  return outcome;
}
