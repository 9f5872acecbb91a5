/**
 * The check of a manifest uploaded from the dashboard (`POST /batch-uploads/check`, and before
 * `POST /batch-uploads` starts anything) on both backends, with nothing of a disk or a cloud: every
 * line as `opflow ingest --dry-run` reads it, with the cost estimate.
 *
 * Where a checked manifest is kept and how its batch starts is the backend's (start-routes.ts on
 * `opflow serve`, runtime/lambda/upload-routes.ts on aws): `locate` says which source and batch name
 * a manifest of this name and content gets there.
 */
import { Readable } from 'node:stream';
import type * as z from 'zod';
import type { BatchOptions, BatchSource, BatchStore } from '../engine/batch-store';
import type { JobDeps } from '../engine/deps';
import { errorMessage } from '../errors/error-message';
import { ApiError } from '../http/job-api';
import { batchIdFor, defaultInFlightPerBatch, parseFailureBudget, sha256 } from '../ingest/batch';
import { estimateBatch } from '../ingest/estimate';
import { IngestRefused, type IngestRequest, type IngestSource } from '../ingest/ingest-item';
// The manifest reader alone: a line naming a document is a problem (documents are not uploaded here).
import { type IngestPreview, previewRecords } from '../ingest/ingest-preview';
import type { manifestUploadBodySchema } from '../ingest/upload-request';

export type ManifestBody = z.infer<typeof manifestUploadBodySchema>;

/** Where a manifest of this body and content (`hash`: the hex SHA-256 of its text) is kept. */
export type LocateManifest = (
  body: ManifestBody,
  tenant: string,
  hash: string,
) => { source: BatchSource; batchName?: string | undefined };

/** Problems listed in an answer (all of them are counted). */
const listedProblems = 500;

/** A manifest ready to check or start: its bytes, source, request and an in-memory reader. */
export interface PreparedManifest {
  bytes: Buffer;
  hash: string;
  source: BatchSource;
  request: IngestRequest;
  inMemory: IngestSource;
  batchId: string;
}

/** The manifest checker of one backend. */
export function manifestChecker(options: { deps: JobDeps; batches: BatchStore; locate: LocateManifest }) {
  const { deps, batches } = options;

  /** The manifest's source, request and reader, refused with the field at fault. */
  const prepare = (body: ManifestBody, boundTenant: string | undefined): PreparedManifest => {
    const { tenant, options: batchOptions } = uploadRequestOf(deps, body, boundTenant);
    const bytes = Buffer.from(body.manifest, 'utf8');
    const hash = sha256(body.manifest);
    const { source, batchName } = options.locate(body, tenant, hash);
    const request: IngestRequest = { batchName, tenant, workflow: body.workflow, options: batchOptions };
    const inMemory: IngestSource = {
      source,
      openBytes: async (start) => Readable.from([bytes.subarray(start)]),
      readDocument: async (path) => {
        throw new IngestRefused(
          `documents are not uploaded with a manifest from the dashboard (${path}); run opflow ingest on the machine that has them`,
        );
      },
    };
    return { bytes, hash, source, request, inMemory, batchId: batchIdFor(source, tenant, batchName) };
  };

  /** Every line checked and the cost estimated; nothing stored. */
  const check = async (body: ManifestBody, tenant: string | undefined) => {
    const prepared = prepare(body, tenant);
    const preview = await previewRecords(
      { engine: deps, batches },
      prepared.inMemory,
      prepared.request,
    ).catch((error) => {
      if (error instanceof IngestRefused) throw new ApiError(400, 'invalid-request', error.message);
      throw error;
    });
    const estimate = await estimateBatch(deps.store, deps.workflows, preview.toRun);
    return { prepared, preview, estimate };
  };
  return { check, summary: uploadSummary, refuseToStart: refuseToStartUpload };
}

/** The fields every upload shares (workflow, tenant, batch options), refused with the field at fault. */
export function uploadRequestOf(
  deps: JobDeps,
  body: Pick<ManifestBody, 'workflow' | 'tenant' | 'failureBudget' | 'selection' | 'maxUnits'>,
  boundTenant: string | undefined,
): { tenant: string; options: BatchOptions } {
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
  return {
    tenant: boundTenant ?? body.tenant,
    options: {
      selection: body.selection,
      failureBudget,
      maxUnits: body.maxUnits,
      inFlight: defaultInFlightPerBatch,
    },
  };
}

/** What a check found, as an upload's answer says it. */
export interface UploadChecked {
  preview: IngestPreview;
  estimate: Awaited<ReturnType<typeof estimateBatch>>;
}

/** What an answer says of a check. */
export const uploadSummary = ({ preview, estimate }: UploadChecked) => ({
  records: preview.records,
  items: preview.items,
  existing: preview.existing,
  toRun: preview.toRun,
  billedBefore: preview.billedBefore,
  problems: preview.problems.slice(0, listedProblems),
  problemCount: preview.problems.length,
  estimate,
});

/** Refuses to start an upload with no usable item, or one whose estimate passes its cost cap. */
export function refuseToStartUpload(
  { preview, estimate }: UploadChecked,
  maxUnits: number | undefined,
  what = 'body.manifest: no line of it can be used (see the problems)',
): void {
  if (preview.items === 0) throw new ApiError(400, 'invalid-request', what);
  if (
    maxUnits !== undefined &&
    estimate.billedUnits !== undefined &&
    preview.billedBefore + estimate.billedUnits > maxUnits
  )
    throw new ApiError(
      409,
      'over-budget',
      `not started: the batch would bill about ${estimate.billedUnits} units, over maxUnits ${maxUnits}`,
      {},
      [
        {
          path: 'body.maxUnits',
          message: `the batch would bill about ${estimate.billedUnits} units, over this cap: raise it or leave it empty`,
        },
      ],
    );
}
