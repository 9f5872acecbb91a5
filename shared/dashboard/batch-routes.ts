/**
 * Batches over HTTP, framework-free routes of the job API (shared/http/job-api.ts) on `opflow
 * serve` and on the Lambda api (token or JWT required, like the job API), for the dashboard and
 * scripts. A caller bound to a tenant sees only that tenant's batches.
 *
 *   GET  /batches                     the batches, newest first (?limit=&cursor=)
 *   GET  /batches/{id}                one batch: totals by status, calls, billed units, elapsed, ETA,
 *                                     and the problems (bad lines) of its current run
 *   POST /batches/{id}/redrive        run its failed and cancelled items again
 *   POST /batches/{id}/cancel         stop releasing its items and cancel its unfinished jobs
 *   GET  /batches/{id}/outputs/{file} summary.csv, summary.xlsx, results.jsonl, failed.jsonl, index.html
 */
import type { Batch, BatchStore } from '../engine/batch-store';
import type { JobDeps } from '../engine/deps';
import { cancelJob, JobRequestError } from '../engine/job-commands';
import { ApiError, type ApiRoute, apiRoute, json, parse } from '../http/job-api';
import { batchListQuerySchema, retryBodySchema } from '../http/request-schemas';
import { admitBatch } from '../ingest/admission';
import { currentViewOf } from '../ingest/batch-view';
import { batchOutputKeys } from '../ingest/outputs-record';
import { redriveBatch } from '../ingest/redrive';
import { listAll, unfinishedStatuses } from '../runtime/job-queries';

/** The outputs' writer (workbook, findings): a chunk of its own, loaded the first time outputs are written. */
const outputsWriter = async () => (await import('../ingest/outputs')).writeBatchOutputs;

const batchIdPattern = /^[\w.:-]{1,200}$/;
const outputFiles = {
  'summary.csv': 'summary',
  'summary.xlsx': 'workbook',
  'results.jsonl': 'results',
  'failed.jsonl': 'failed',
  'index.html': 'index',
} as const;

const Refusal = ApiError;

/** The batch, if the caller may see it: another tenant's batch does not exist for a bound caller. */
async function mustGet(batches: BatchStore, id: string, tenant: string | undefined): Promise<Batch> {
  if (!batchIdPattern.test(id)) throw new Refusal(400, 'invalid-request', 'path.id: is not a batch id');
  const batch = await batches.get(id);
  if (!batch || (tenant !== undefined && batch.tenant !== tenant))
    throw new Refusal(404, 'not-found', `no batch ${id}`);
  return batch;
}

/** Stops a batch (no more items released) and cancels its unfinished jobs. */
export async function cancelBatch(
  deps: { engine: JobDeps; batches: BatchStore },
  batchId: string,
): Promise<{ batch: Batch; cancelled: number }> {
  for (let tries = 0; tries < 10; tries++) {
    const batch = await deps.batches.get(batchId);
    if (!batch) throw new Refusal(404, 'not-found', `no batch ${batchId}`);
    if (batch.status === 'FINISHED') break;
    const now = deps.engine.clock.now();
    const stopped: Batch = {
      ...batch,
      version: batch.version + 1,
      status: 'STOPPED',
      reason: 'cancelled: no new items are started and its unfinished jobs were cancelled',
      updatedAt: now,
    };
    if (await deps.batches.commit(stopped, batch.version)) break;
  }
  let cancelled = 0;
  for (const status of unfinishedStatuses) {
    for (const job of await listAll(deps.engine.store, { batchId, status })) {
      try {
        await cancelJob(deps.engine, job.id);
        cancelled += 1;
      } catch (error) {
        // Finished meanwhile: nothing to cancel.
        if (!(error instanceof JobRequestError)) throw error;
      }
    }
  }
  // Count the jobs just cancelled against the batch now (admission passes stopped batches by).
  const settled = await admitBatch(deps, batchId);
  if (settled && settled.settled > 0) await (await outputsWriter())(deps, settled.batch);
  return { batch: settled?.batch ?? (await deps.batches.get(batchId))!, cancelled };
}

/**
 * The batch routes. A bound caller's page is the store's page less other tenants' batches, so it
 * may hold fewer than `limit` and still have a cursor.
 */
export function batchRoutes(options: { deps: JobDeps; batches: BatchStore }): ApiRoute[] {
  const deps = { engine: options.deps, batches: options.batches };
  const now = () => options.deps.clock.now();
  return [
    apiRoute('listBatches', async (_params, request, { tenant }) => {
      const query = parse(batchListQuerySchema, request.query ?? {}, 'query');
      let page: Awaited<ReturnType<BatchStore['list']>>;
      try {
        page = await options.batches.list(query);
      } catch (error) {
        if (error instanceof RangeError)
          throw new Refusal(400, 'invalid-request', 'query.cursor: is not a cursor this API handed out');
        throw error;
      }
      const visible = page.batches.filter((batch) => tenant === undefined || batch.tenant === tenant);
      const views = await Promise.all(
        visible.map((batch) => currentViewOf(options.deps.store, batch, now())),
      );
      return json(200, { batches: views, cursor: page.cursor });
    }),
    apiRoute('getBatch', async ({ id }, _request, { tenant }) => {
      const batch = await mustGet(options.batches, id, tenant);
      const problems = await options.batches.listProblems(batch.id, batch.run);
      return json(200, {
        batch: await currentViewOf(options.deps.store, batch, now()),
        problems: problems.slice(0, 500),
        problemCount: problems.length,
      });
    }),
    apiRoute('getBatchOutput', async ({ id, file }, _request, { tenant }) => {
      const batch = await mustGet(options.batches, id, tenant);
      const which = outputFiles[file as keyof typeof outputFiles];
      if (!which)
        throw new Refusal(
          404,
          'not-found',
          `a batch has no output ${file}; there are ${Object.keys(outputFiles).join(', ')}`,
        );
      let stored = await options.deps.reports.get(batchOutputKeys(batch.id)[which]);
      if (!stored) {
        await (await outputsWriter())(deps, batch);
        stored = await options.deps.reports.get(batchOutputKeys(batch.id)[which]);
      }
      if (!stored) throw new Refusal(404, 'not-found', `batch ${batch.id} has no ${file} yet`);
      return {
        status: 200,
        headers: {
          'content-type': stored.contentType,
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
          'content-disposition': `${which === 'index' ? 'inline' : 'attachment'}; filename="${file}"`,
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
        },
        ...(which === 'workbook'
          ? { body: Buffer.from(stored.body).toString('base64'), base64: true as const }
          : { body: Buffer.from(stored.body).toString('utf8') }),
      };
    }),
    apiRoute('redriveBatch', async ({ id }, _request, { tenant, body }) => {
      const batch = await mustGet(options.batches, id, tenant);
      const outcome = await redriveBatch(deps, batch.id, parse(retryBodySchema, body(), 'body'));
      return json(200, {
        batch: await currentViewOf(options.deps.store, outcome.batch, now()),
        retried: outcome.retried.length,
        refused: outcome.refused,
      });
    }),
    apiRoute('cancelBatch', async ({ id }, _request, { tenant }) => {
      const batch = await mustGet(options.batches, id, tenant);
      const outcome = await cancelBatch(deps, batch.id);
      return json(200, {
        batch: await currentViewOf(options.deps.store, outcome.batch, now()),
        cancelled: outcome.cancelled,
      });
    }),
  ];
}
