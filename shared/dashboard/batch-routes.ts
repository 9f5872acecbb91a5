/**
 * Batches over HTTP on `opflow serve` (token required, like the job API), for the dashboard and
 * scripts:
 *
 *   GET  /batches                     the batches, newest first (?limit=&cursor=)
 *   GET  /batches/{id}                one batch: totals by status, calls, billed units, elapsed, ETA,
 *                                     and the problems (bad lines) of its current run
 *   POST /batches/{id}/redrive        run its failed and cancelled items again
 *   POST /batches/{id}/cancel         stop releasing its items and cancel its unfinished jobs
 *   GET  /batches/{id}/outputs/{file} summary.csv, results.jsonl, failed.jsonl, index.html
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as z from 'zod';
import type { Batch, BatchStore } from '../engine/batch-store';
import type { EngineDeps } from '../engine/deps';
import { cancelJob, JobRequestError } from '../engine/job-commands';
import type { ServerMount } from '../http/node-server';
import { viewOf } from '../ingest/batch-view';
import { batchOutputKeys, writeBatchOutputs } from '../ingest/outputs';
import { redriveBatch } from '../ingest/redrive';
import { listAll, unfinishedStatuses } from '../runtime/job-queries';

const batchIdPattern = /^[\w.:-]{1,200}$/;
const listQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(1000).optional(),
});
const outputFiles = {
  'summary.csv': 'summary',
  'results.jsonl': 'results',
  'failed.jsonl': 'failed',
  'index.html': 'index',
} as const;

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(value));
}

async function mustGet(batches: BatchStore, rawId: string): Promise<Batch> {
  let id: string;
  try {
    id = decodeURIComponent(rawId);
  } catch {
    throw new Refusal(400, 'invalid-request', 'path.id: is not valid URL encoding');
  }
  if (!batchIdPattern.test(id)) throw new Refusal(400, 'invalid-request', 'path.id: is not a batch id');
  const batch = await batches.get(id);
  if (!batch) throw new Refusal(404, 'not-found', `no batch ${id}`);
  return batch;
}

/** Stops a batch (no more items released) and cancels its unfinished jobs. */
export async function cancelBatch(
  deps: { engine: EngineDeps; batches: BatchStore },
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
  return { batch: (await deps.batches.get(batchId))!, cancelled };
}

export function batchMount(options: { deps: EngineDeps; batches: BatchStore }): ServerMount {
  const deps = { engine: options.deps, batches: options.batches };
  const route = async (req: IncomingMessage, res: ServerResponse, path: string, method: string) => {
    const now = () => options.deps.clock.now();
    if (path === '/batches') {
      if (method !== 'GET')
        throw new Refusal(405, 'method-not-allowed', `${method} ${path} is not supported; use GET`);
      const query = Object.fromEntries(new URLSearchParams((req.url ?? '').split('?')[1] ?? ''));
      const parsed = listQuerySchema.safeParse(query);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new Refusal(400, 'invalid-request', `query.${issue.path.join('.')}: ${issue.message}`);
      }
      let page: Awaited<ReturnType<BatchStore['list']>>;
      try {
        page = await options.batches.list(parsed.data);
      } catch (error) {
        if (error instanceof RangeError)
          throw new Refusal(400, 'invalid-request', 'query.cursor: is not a cursor this API handed out');
        throw error;
      }
      return sendJson(res, 200, {
        batches: page.batches.map((batch) => viewOf(batch, now())),
        cursor: page.cursor,
      });
    }
    const match = /^\/batches\/([^/]+)(?:\/(redrive|cancel|outputs\/(.+)))?$/.exec(path);
    if (!match) throw new Refusal(404, 'not-found', `no route ${path}`);
    const [, rawId, action, file] = match;
    const batch = await mustGet(options.batches, rawId!);
    if (action === undefined) {
      if (method !== 'GET')
        throw new Refusal(405, 'method-not-allowed', `${method} ${path} is not supported; use GET`);
      const problems = await options.batches.listProblems(batch.id, batch.run);
      return sendJson(res, 200, {
        batch: viewOf(batch, now()),
        problems: problems.slice(0, 500),
        problemCount: problems.length,
      });
    }
    if (file !== undefined) {
      if (method !== 'GET')
        throw new Refusal(405, 'method-not-allowed', `${method} ${path} is not supported; use GET`);
      const which = outputFiles[file as keyof typeof outputFiles];
      if (!which)
        throw new Refusal(
          404,
          'not-found',
          `a batch has no output ${file}; there are ${Object.keys(outputFiles).join(', ')}`,
        );
      let stored = await options.deps.reports.get(batchOutputKeys(batch.id)[which]);
      if (!stored) {
        await writeBatchOutputs(deps, batch);
        stored = await options.deps.reports.get(batchOutputKeys(batch.id)[which]);
      }
      if (!stored) throw new Refusal(404, 'not-found', `batch ${batch.id} has no ${file} yet`);
      res.writeHead(200, {
        'content-type': stored.contentType,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'content-disposition': `${which === 'index' ? 'inline' : 'attachment'}; filename="${file}"`,
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
      });
      return res.end(stored.body);
    }
    if (method !== 'POST')
      throw new Refusal(405, 'method-not-allowed', `${method} ${path} is not supported; use POST`);
    if (action === 'redrive') {
      const outcome = await redriveBatch(deps, batch.id);
      return sendJson(res, 200, {
        batch: viewOf(outcome.batch, now()),
        retried: outcome.retried.length,
        refused: outcome.refused,
      });
    }
    const outcome = await cancelBatch(deps, batch.id);
    return sendJson(res, 200, { batch: viewOf(outcome.batch, now()), cancelled: outcome.cancelled });
  };
  return {
    matches: (path) => path === '/batches' || path.startsWith('/batches/'),
    handle: async (req, res, { path, method, readBody }) => {
      try {
        // POST bodies are not used; read them so the connection stays usable.
        if (method === 'POST') await readBody();
        await route(req, res, path.replace(/\/+$/, '') || '/', method);
      } catch (error) {
        if (error instanceof Refusal) {
          return sendJson(res, error.status, {
            error: { status: error.status, code: error.code, message: error.message },
          });
        }
        throw error;
      }
    },
  };
}
