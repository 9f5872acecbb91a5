/**
 * Routes that start work from the dashboard, on the job API's terms (token, tenant, JSON-only
 * writes, refusals naming the field), beside `POST /jobs` itself:
 *
 *   GET  /jobs/{id}/input         the job's input, workflow, label, selection, priority and cost cap: "run again like this"
 *   POST /batch-uploads/check     a manifest's text checked line by line as `opflow ingest --dry-run`
 *                                 does, with the cost estimate; nothing is stored or started
 *   POST /batch-uploads           the same manifest kept in the uploads folder and ingested as a batch
 *                                 (as `opflow ingest --no-wait`; this server's batch rounds run it)
 *
 * A manifest comes as text in the JSON body, so the body limit (1 MiB) bounds it; larger ones go
 * through `opflow ingest` on the machine. Its lines may not name documents (`file`): only the
 * manifest is uploaded. The same file name and content is the same batch, so uploading it again
 * starts nothing twice.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import type * as z from 'zod';
import type { BatchSource, BatchStore } from '../engine/batch-store';
import type { JobDeps } from '../engine/deps';
import { errorMessage } from '../errors/error-message';
import { ApiError, type ApiRoute, apiRoute, json, parse } from '../http/job-api';
import { batchIdFor, defaultInFlightPerBatch, parseFailureBudget, sha256 } from '../ingest/batch';
import { viewOf } from '../ingest/batch-view';
import { estimateBatch } from '../ingest/estimate';
import { manifestKindOf } from '../ingest/inbox';
import {
  IngestRefused,
  type IngestRequest,
  type IngestSource,
  openBatch,
  previewIngest,
} from '../ingest/ingest';
import { localIngestSource } from '../ingest/local-source';
import { manifestUploadBodySchema as manifestBodySchema } from '../ingest/upload-request';
import type { BatchRunner } from './batch-runner';

type ManifestBody = z.infer<typeof manifestBodySchema>;

/** Problems listed in an answer (all of them are counted). */
const listedProblems = 500;

/** The job's input as stored: inline in its record, or in the report store when large. */
async function storedInput(deps: JobDeps, input: { inline: unknown } | { ref: string }): Promise<unknown> {
  if ('inline' in input) return input.inline;
  const stored = await deps.reports.get(input.ref);
  if (!stored) throw new ApiError(404, 'not-found', 'the input of this job is no longer kept');
  return JSON.parse(Buffer.from(stored.body).toString('utf8'));
}

/** Where a server on the database `dbPath` keeps uploaded manifests: `uploads/` beside the database. */
export function uploadsFolderOf(dbPath: string): string {
  return dbPath === ':memory:' ? join(tmpdir(), 'opflow-uploads') : join(dirname(resolve(dbPath)), 'uploads');
}

export function startRoutes(options: {
  deps: JobDeps;
  batches: BatchStore;
  runner: BatchRunner;
  /** Where uploaded manifests are kept (a batch re-reads its source when it runs again). */
  uploadsFolder: string;
}): ApiRoute[] {
  const { deps, batches } = options;

  /** The manifest's source, request and reader, refused with the field at fault. */
  const prepare = (body: ManifestBody, boundTenant: string | undefined) => {
    if (!deps.workflows.has(body.workflow)) {
      throw new ApiError(
        400,
        'invalid-request',
        `body.workflow: no workflow ${body.workflow}; there are ${[...deps.workflows.keys()].sort().join(', ')}`,
      );
    }
    if (boundTenant !== undefined && body.tenant !== 'default' && body.tenant !== boundTenant)
      throw new ApiError(403, 'forbidden', `this caller may only ingest for tenant ${boundTenant}`);
    let failureBudget: ReturnType<typeof parseFailureBudget> | undefined;
    try {
      failureBudget = body.failureBudget === undefined ? undefined : parseFailureBudget(body.failureBudget);
    } catch (error) {
      throw new ApiError(
        400,
        'invalid-request',
        `body.failureBudget: ${errorMessage(error).replace(/^--failure-budget:?\s*/, '')}`,
      );
    }
    const bytes = Buffer.from(body.manifest, 'utf8');
    // One folder per content: the batch id follows the file name, and the same content is the same batch.
    const folder = join(options.uploadsFolder, sha256(body.manifest).slice(0, 16));
    const source: BatchSource = { kind: manifestKindOf(body.fileName)!, uri: join(folder, body.fileName) };
    const request: IngestRequest = {
      batchName: body.batchName,
      tenant: boundTenant ?? body.tenant,
      workflow: body.workflow,
      options: {
        selection: body.selection,
        failureBudget,
        maxUnits: body.maxUnits,
        inFlight: defaultInFlightPerBatch,
      },
    };
    const inMemory: IngestSource = {
      source,
      openBytes: async (start) => Readable.from([bytes.subarray(start)]),
      readDocument: async (path) => {
        throw new IngestRefused(
          `documents are not uploaded with a manifest from the dashboard (${path}); run opflow ingest on the machine that has them`,
        );
      },
    };
    return { bytes, folder, source, request, inMemory };
  };

  const check = async (body: ManifestBody, tenant: string | undefined) => {
    const prepared = prepare(body, tenant);
    const preview = await previewIngest({ engine: deps, batches }, prepared.inMemory, prepared.request).catch(
      (error) => {
        if (error instanceof IngestRefused) throw new ApiError(400, 'invalid-request', error.message);
        throw error;
      },
    );
    const estimate = await estimateBatch(deps.store, deps.workflows, preview.toRun);
    return { prepared, preview, estimate };
  };

  const summary = ({ preview, estimate }: Awaited<ReturnType<typeof check>>) => ({
    records: preview.records,
    items: preview.items,
    existing: preview.existing,
    toRun: preview.toRun,
    billedBefore: preview.billedBefore,
    problems: preview.problems.slice(0, listedProblems),
    problemCount: preview.problems.length,
    estimate,
  });

  return [
    apiRoute('getJobInput', async ({ id }, _request, { tenant }) => {
      const job = /^[0-9A-Za-z_-]{1,64}$/.test(id) ? await deps.store.get(id) : undefined;
      if (!job || (tenant !== undefined && job.tenant !== tenant))
        throw new ApiError(404, 'not-found', `no job ${id}`);
      return json(200, {
        jobId: job.id,
        workflow: job.workflow,
        input: await storedInput(deps, job.input),
        label: job.label,
        selection: job.selection,
        priority: job.priority,
        maxUnits: job.maxUnits,
        tenant: job.tenant,
      });
    }),
    apiRoute('checkBatchUpload', async (_params, _request, { tenant, body }) => {
      const checked = await check(parse(manifestBodySchema, body(), 'body'), tenant);
      return json(200, {
        dryRun: true,
        batchId: batchIdFor(
          checked.prepared.source,
          checked.prepared.request.tenant,
          checked.prepared.request.batchName,
        ),
        ...summary(checked),
      });
    }),
    apiRoute('startBatchUpload', async (_params, _request, { tenant, body }) => {
      const parsed = parse(manifestBodySchema, body(), 'body');
      const checked = await check(parsed, tenant);
      const { prepared, preview, estimate } = checked;
      if (preview.items === 0)
        throw new ApiError(
          400,
          'invalid-request',
          'body.manifest: no line of it can be used (see the problems)',
        );
      const max = parsed.maxUnits;
      if (
        max !== undefined &&
        estimate.billedUnits !== undefined &&
        preview.billedBefore + estimate.billedUnits > max
      )
        throw new ApiError(
          409,
          'over-budget',
          `not started: the batch would bill about ${estimate.billedUnits} units, over maxUnits ${max}`,
        );
      await mkdir(prepared.folder, { recursive: true });
      await writeFile(prepared.source.uri, prepared.bytes);
      const { batch, state } = await openBatch(
        { engine: deps, batches },
        prepared.source,
        prepared.request,
      ).catch((error) => {
        if (error instanceof IngestRefused) throw new ApiError(400, 'invalid-request', error.message);
        throw error;
      });
      options.runner.drive(localIngestSource(prepared.source), batch.id);
      return json(201, { batch: viewOf(batch, deps.clock.now()), state, ...summary(checked) });
    }),
  ];
}
