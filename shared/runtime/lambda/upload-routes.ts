/**
 * The dashboard's start routes on aws, on the same terms as `opflow serve`'s (start-routes.ts):
 *
 *   GET  /jobs/{id}/input         "run again like this": the job's input, read from DynamoDB (or S3 when large)
 *   POST /batch-uploads/check     the manifest's text checked line by line, with the cost estimate
 *   POST /batch-uploads           the same check, then a presigned S3 PUT (202) for the browser to
 *                                 send the manifest under inbox/<workflow>/<batch>/, where the ingest
 *                                 function picks it up as it does `opflow ingest`'s uploads; with
 *                                 documentFiles, one presigned PUT per document
 *   POST /batch-uploads/commit    documents sent: each looked up in the bucket, then their manifest
 *                                 written last, which starts the batch
 *
 * The PUT is bound to the checked content (its SHA-256 is signed), its key and its metadata (tenant,
 * batch, options), so what runs is what was checked and estimated. The batch id follows the file
 * name and content, as on `opflow serve`: the same file again is the same batch, started once.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { awsClientConfig } from '../../backends/aws/clients';
import type { InboxUpload, PresignTarget } from '../../backends/aws/s3-inbox-upload';
import { jobInputRoute } from '../../dashboard/job-input-route';
import type { LocateManifest } from '../../dashboard/upload-check';
import type { BatchStore } from '../../engine/batch-store';
import type { ApiRoute } from '../../http/job-api';
import { ApiError, apiRoute, json, parse } from '../../http/job-api';
import { batchIdFor } from '../../ingest/batch';
import { inboxFolderOf, inboxMetadataFor, manifestKindOf } from '../../ingest/inbox';
import { documentFilesPlan, documentMismatch } from '../../ingest/inbox-documents';
import { documentFilesUploadBodySchema, manifestUploadBodySchema } from '../../ingest/upload-request';
import type { JobSide } from './jobs-runtime';

type InboxSide = typeof import('../../backends/aws/s3-inbox') &
  typeof import('../../backends/aws/s3-inbox-upload');

/**
 * The presigner, the inbox's look-up and write, and their S3 client, loaded on the first upload (a
 * chunk of its own: most calls need none of them).
 */
function inboxOnFirstUse(pipeline: Pick<JobSide, 'config'>) {
  let loading: Promise<{ s3: S3Client; side: InboxSide }> | undefined;
  const load = () => {
    loading ??= Promise.all([
      import('../../backends/aws/s3-inbox'),
      import('../../backends/aws/s3-inbox-upload'),
      import('../../backends/aws/s3-client'),
    ]).then(([inbox, upload, { createS3Client }]) => ({
      s3: createS3Client(awsClientConfig(pipeline.config)),
      side: { ...inbox, ...upload },
    }));
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  };
  return {
    presign: async (target: PresignTarget): Promise<InboxUpload> => {
      const { s3, side } = await load();
      return side.presignInboxUpload(s3, target);
    },
    head: async (target: { bucket: string; key: string }) => {
      const { s3, side } = await load();
      return side.headInboxObject(s3, target, true);
    },
    put: async (target: { bucket: string; key: string; body: string; metadata: Record<string, string> }) => {
      const { s3, side } = await load();
      return side.putInboxObject(s3, target, target.body, target.metadata, 'application/x-ndjson');
    },
  };
}

type Inbox = ReturnType<typeof inboxOnFirstUse>;

/** A documents check: names, types, sizes and the estimate (the ingest function reads the documents). */
async function checkDocumentFiles(
  deps: JobSide['deps'],
  batches: BatchStore,
  body: unknown,
  tenant: string | undefined,
) {
  const parsed = parse(documentFilesUploadBodySchema, body, 'body');
  const check = await import('../../dashboard/upload-check');
  return { parsed, checked: await check.checkDocumentFiles({ deps, batches }, parsed, tenant), check };
}

type CheckedDocuments = Awaited<ReturnType<typeof checkDocumentFiles>>;

/** Look-ups of the bucket at once, when a commit checks its documents are there. */
const headsAtOnce = 8;

/** A body of documents announced by name, size and SHA-256 (sent by presigned PUTs). */
const ofDocumentFiles = (body: unknown) =>
  typeof body === 'object' && body !== null && 'documentFiles' in body;

export function awsUploadRoutes(pipeline: Pick<JobSide, 'deps' | 'config'>, batches: BatchStore): ApiRoute[] {
  const { deps } = pipeline;
  const bucket = pipeline.config.bucketName;
  const inBucket = `s3://${bucket}/`;
  // The batch is named after the file and its content (as on opflow serve), unless the body names it.
  const locate: LocateManifest = (body, tenant, hash) => {
    const kind = manifestKindOf(body.fileName)!;
    const batchName =
      body.batchName ?? batchIdFor({ kind, uri: `upload/${hash.slice(0, 16)}/${body.fileName}` }, tenant);
    const key = `${inboxFolderOf(tenant, body.workflow, batchName)}${body.fileName}`;
    return { source: { kind, uri: `${inBucket}${key}` }, batchName };
  };
  // The checker reads manifests as ingest does (not the documents lines name: those need opflow
  // ingest): loaded on the first upload, a chunk of its own, so the api's cold start does not carry it.
  let checker: Promise<ReturnType<typeof import('../../dashboard/upload-check').manifestChecker>> | undefined;
  const loadChecker = () => {
    checker ??= import('../../dashboard/upload-check').then(({ manifestChecker }) =>
      manifestChecker({ deps, batches, locate }),
    );
    checker.catch(() => {
      checker = undefined;
    });
    return checker;
  };
  const inbox = inboxOnFirstUse(pipeline);
  /** Documents inline (base64 in the body) are not taken here: they go by presigned PUTs (`documentFiles`). */
  const noDocuments = (body: unknown) => {
    if (typeof body === 'object' && body !== null && 'documents' in body)
      throw new ApiError(
        400,
        'invalid-request',
        'body.documents: the AWS job API takes documents by presigned upload, not in the body: send documentFiles [{name, size, sha256}], PUT each to its upload.url, then POST /batch-uploads/commit (or opflow ingest <folder> --workflow <name>)',
      );
  };
  const checkDocuments = (body: unknown, tenant: string | undefined) =>
    checkDocumentFiles(deps, batches, body, tenant);
  return [
    jobInputRoute(deps),
    apiRoute('checkBatchUpload', async (_params, _request, { tenant, body }) => {
      noDocuments(body());
      if (ofDocumentFiles(body())) {
        const { checked, check } = await checkDocuments(body(), tenant);
        return json(200, {
          dryRun: true,
          batchId: checked.plan.batchId,
          ...check.uploadSummary(checked),
          reading: check.documentFilesReading,
        });
      }
      const { check, summary } = await loadChecker();
      const checked = await check(parse(manifestUploadBodySchema, body(), 'body'), tenant);
      return json(200, { dryRun: true, batchId: checked.prepared.batchId, ...summary(checked) });
    }),
    apiRoute('startBatchUpload', async (_params, _request, { tenant, body }) => {
      noDocuments(body());
      if (ofDocumentFiles(body())) {
        return startDocuments({ deps, bucket, inbox }, await checkDocuments(body(), tenant));
      }
      const parsed = parse(manifestUploadBodySchema, body(), 'body');
      const { check, summary, refuseToStart } = await loadChecker();
      const checked = await check(parsed, tenant);
      refuseToStart(checked, parsed.maxUnits);
      const { prepared } = checked;
      const upload = await inbox.presign({
        bucket,
        key: prepared.source.uri.slice(inBucket.length),
        metadata: inboxMetadataFor(prepared.request.tenant, prepared.batchId, prepared.request.options),
        sha256Hex: prepared.hash,
        now: deps.clock.now(),
      });
      return json(202, { batchId: prepared.batchId, upload, ...summary(checked) });
    }),
    apiRoute('commitBatchUpload', async (_params, _request, { tenant, body }) =>
      commitDocuments({ deps, bucket, inbox }, body(), tenant),
    ),
  ];
}

/**
 * POST /batch-uploads/commit: every document announced is looked up in the bucket (size, SHA-256,
 * metadata); when all are there the manifest is written last and starts the batch, else 409 names each.
 */
async function commitDocuments(
  { deps, bucket, inbox }: { deps: JobSide['deps']; bucket: string; inbox: Inbox },
  body: unknown,
  tenant: string | undefined,
) {
  // The body the PUTs were presigned for: the same documents, batch and options.
  const parsed = parse(documentFilesUploadBodySchema, body, 'body');
  const { tenant: owner, options } = (await import('../../dashboard/upload-check')).uploadRequestOf(
    deps,
    parsed,
    tenant,
  );
  const plan = documentFilesPlan(parsed, owner, options);
  const indexOf = new Map(parsed.documentFiles.map((file, index) => [file.name, index]));
  const missing: { path: string; message: string }[] = [];
  for (let at = 0; at < plan.files.length; at += headsAtOnce) {
    const slice = plan.files.slice(at, at + headsAtOnce);
    const stored = await Promise.all(slice.map((file) => inbox.head({ bucket, key: file.key })));
    slice.forEach((file, index) => {
      const wrong = documentMismatch(file, stored[index], plan.documentMetadata);
      if (wrong)
        missing.push({
          path: `body.documentFiles[${indexOf.get(file.name)}]`,
          message: `${file.name}: ${wrong}`,
        });
    });
  }
  if (missing.length > 0)
    throw new ApiError(
      409,
      'not-uploaded',
      `not started: ${missing.length} of ${plan.files.length} documents are not in storage as announced (${missing
        .slice(0, 3)
        .map((issue) => issue.message)
        .join('; ')}${missing.length > 3 ? '; …' : ''}); send them again, then commit`,
      {},
      missing,
    );
  // Every document is there: the manifest, written last, starts the batch (the ingest function).
  await inbox.put({
    bucket,
    key: plan.manifestKey,
    body: plan.manifestText,
    metadata: plan.manifestMetadata,
  });
  return json(202, { batchId: plan.batchId, committed: plan.files.length });
}

/** POST /batch-uploads with documentFiles: one presigned PUT per document, each bound to its key, length, SHA-256 and metadata. */
async function startDocuments(
  { deps, bucket, inbox }: { deps: JobSide['deps']; bucket: string; inbox: Inbox },
  { parsed, checked, check }: CheckedDocuments,
) {
  check.refuseToStartUpload(checked, parsed.maxUnits, 'body.documentFiles: none of them would run');
  const { plan } = checked;
  const now = deps.clock.now();
  // One PUT per document, each bound to its key, length, SHA-256 and metadata.
  const uploads = await Promise.all(
    plan.files.map(async (file) => ({
      name: file.name,
      ...(await inbox.presign({
        bucket,
        key: file.key,
        metadata: plan.documentMetadata,
        sha256Hex: file.sha256,
        contentLength: file.size,
        now,
      })),
    })),
  );
  return json(202, {
    batchId: plan.batchId,
    uploads,
    commit: { method: 'POST', path: '/batch-uploads/commit' },
    ...check.uploadSummary(checked),
    reading: check.documentFilesReading,
  });
}
