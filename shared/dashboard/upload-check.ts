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
import { type DocumentFilesBody, type DocumentFilesPlan, documentFilesPlan } from '../ingest/inbox-documents';
import { IngestRefused, type IngestRequest, type IngestSource } from '../ingest/ingest-item';
// The manifest reader alone: a line naming a document is a problem (documents are not uploaded here).
import { type IngestPreview, previewRecords } from '../ingest/ingest-preview';
import type { manifestUploadBodySchema } from '../ingest/upload-request';
import { didYouMean } from '../openplatform/closest-name';

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

/**
 * The check of documents announced by name, size and SHA-256 (the AWS job API's `documentFiles`,
 * whose bytes go straight to S3): the api never holds them, so it reads none. What it checks before
 * anything is stored or paid: the names, types and sizes (the body's schema, each refusal naming its
 * document), the workflow, tenant and options, the batch (the same documents again are the same
 * batch: its items count as ingested before), and the cost estimate of one item per document. The
 * documents themselves are read by the ingest function, under the same budget as `opflow ingest`'s
 * (documents.ts): one it cannot read is a problem of the batch named with its file, and the rest run.
 */
export async function checkDocumentFiles(
  options: { deps: JobDeps; batches: BatchStore },
  body: DocumentFilesBody,
  boundTenant: string | undefined,
): Promise<UploadChecked & { plan: DocumentFilesPlan; prepared: { batchId: string } }> {
  const { deps, batches } = options;
  const { tenant, options: batchOptions } = uploadRequestOf(deps, body, boundTenant);
  const plan = documentFilesPlan(body, tenant, batchOptions);
  const stored = await batches.get(plan.batchId);
  if (stored && stored.tenant !== tenant)
    throw new ApiError(
      400,
      'invalid-request',
      `body.batchName: batch ${plan.batchId} belongs to another tenant; choose another batch name`,
    );
  const count = plan.files.length;
  const existing = Math.min(stored?.items ?? 0, count);
  const preview: IngestPreview = {
    records: count,
    items: count,
    byWorkflow: { [body.workflow]: count },
    existing,
    toRun: count > existing ? { [body.workflow]: count - existing } : {},
    billedBefore: stored?.settled.billedUnits ?? 0,
    problems: [],
  };
  const estimate = await estimateBatch(deps.store, deps.workflows, preview.toRun);
  return { plan, prepared: { batchId: plan.batchId }, preview, estimate };
}

/** What a documents check by name says of the reading it leaves to the ingest function. */
export const documentFilesReading =
  'the documents are read when the ingest function takes the batch, under the same budget as opflow ingest: one it cannot read (an unreadable .pdf, a .docx over its limits, text the workflow refuses) is a problem of the batch, named with its file, and the rest run';

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
      `body.workflow: no workflow ${body.workflow}${didYouMean(body.workflow, [...deps.workflows.keys()])}; there are ${[...deps.workflows.keys()].sort().join(', ')}`,
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
