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
 * Both take, instead of a manifest, documents (`documents: [{name, content}]`, base64): each an
 * item, read as `opflow ingest <folder>` reads a folder's (document-upload.ts).
 *
 * A manifest comes as text in the JSON body, so the body limit (1 MiB) bounds it; larger ones go
 * through `opflow ingest` on the machine. Its lines may not name documents (`file`): only the
 * manifest is uploaded. The same file name and content is the same batch, so uploading it again
 * starts nothing twice; the same documents too.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { BatchStore } from '../engine/batch-store';
import type { JobDeps } from '../engine/deps';
import { ApiError, type ApiRoute, apiRoute, json, parse } from '../http/job-api';
import { viewOf } from '../ingest/batch-view';
import { manifestKindOf } from '../ingest/inbox';
import { IngestRefused, openBatch } from '../ingest/ingest';
import { localIngestSource } from '../ingest/local-source';
import {
  documentsUploadBodySchema,
  manifestUploadBodySchema as manifestBodySchema,
} from '../ingest/upload-request';
import type { BatchRunner } from './batch-runner';
import { documentsChecker } from './document-upload';
import { jobInputRoute } from './job-input-route';
import {
  manifestChecker,
  type PreparedManifest,
  refuseToStartUpload,
  type UploadChecked,
} from './upload-check';

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
  // One folder per content: the batch id follows the file name, and the same content is the same batch.
  const { check, summary, refuseToStart } = manifestChecker({
    deps,
    batches,
    locate: (body, _tenant, hash) => ({
      source: {
        kind: manifestKindOf(body.fileName)!,
        uri: join(options.uploadsFolder, hash.slice(0, 16), body.fileName),
      },
      batchName: body.batchName,
    }),
  });

  const documents = documentsChecker({ deps, batches, uploadsFolder: options.uploadsFolder });
  /** A body of documents (rather than a manifest): it names them. */
  const ofDocuments = (body: unknown) =>
    typeof body === 'object' && body !== null && 'documents' in body && !('manifest' in body);

  /**
   * The batch of a checked upload whose source is kept: opened (a refusal is the request's, 400),
   * run by this server's batch rounds, and answered 201 with what the check found.
   */
  const started = async (
    checked: UploadChecked & { prepared: Pick<PreparedManifest, 'source' | 'request'> },
  ) => {
    const { source, request } = checked.prepared;
    const { batch, state } = await openBatch({ engine: deps, batches }, source, request).catch((error) => {
      if (error instanceof IngestRefused) throw new ApiError(400, 'invalid-request', error.message);
      throw error;
    });
    options.runner.drive(localIngestSource(source), batch.id);
    return json(201, { batch: viewOf(batch, deps.clock.now()), state, ...summary(checked) });
  };

  return [
    jobInputRoute(deps),
    apiRoute('checkBatchUpload', async (_params, _request, { tenant, body }) => {
      const checked = ofDocuments(body())
        ? await documents.check(parse(documentsUploadBodySchema, body(), 'body'), tenant)
        : await check(parse(manifestBodySchema, body(), 'body'), tenant);
      return json(200, { dryRun: true, batchId: checked.prepared.batchId, ...summary(checked) });
    }),
    apiRoute('startBatchUpload', async (_params, _request, { tenant, body }) => {
      if (ofDocuments(body())) {
        const parsed = parse(documentsUploadBodySchema, body(), 'body');
        const checked = await documents.check(parsed, tenant);
        refuseToStartUpload(
          checked,
          parsed.maxUnits,
          'body.documents: none of them can be used (see the problems)',
        );
        await documents.keep(checked.prepared);
        return started(checked);
      }
      const parsed = parse(manifestBodySchema, body(), 'body');
      const checked = await check(parsed, tenant);
      refuseToStart(checked, parsed.maxUnits);
      const { prepared } = checked;
      await mkdir(dirname(prepared.source.uri), { recursive: true });
      await writeFile(prepared.source.uri, prepared.bytes);
      return started(checked);
    }),
  ];
}
