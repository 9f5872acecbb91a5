/**
 * The dashboard's start routes on aws, on the same terms as `opflow serve`'s (start-routes.ts):
 *
 *   GET  /jobs/{id}/input         "run again like this": the job's input, read from DynamoDB (or S3 when large)
 *   POST /batch-uploads/check     the manifest's text checked line by line, with the cost estimate
 *   POST /batch-uploads           the same check, then a presigned S3 PUT (202) for the browser to
 *                                 send the manifest under inbox/<workflow>/<batch>/, where the ingest
 *                                 function picks it up as it does `opflow ingest`'s uploads
 *
 * The PUT is bound to the checked content (its SHA-256 is signed), its key and its metadata (tenant,
 * batch, options), so what runs is what was checked and estimated. The batch id follows the file
 * name and content, as on `opflow serve`: the same file again is the same batch, started once.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { awsClientConfig } from '../../backends/aws/clients';
import type { InboxUpload } from '../../backends/aws/s3-inbox-upload';
import { jobInputRoute } from '../../dashboard/job-input-route';
import type { LocateManifest } from '../../dashboard/upload-check';
import type { BatchStore } from '../../engine/batch-store';
import type { ApiRoute } from '../../http/job-api';
import { ApiError, apiRoute, json, parse } from '../../http/job-api';
import { batchIdFor } from '../../ingest/batch';
import { inboxFolderOf, inboxMetadataFor, manifestKindOf } from '../../ingest/inbox';
import { manifestUploadBodySchema } from '../../ingest/upload-request';
import type { JobSide } from './jobs-runtime';

type PresignTarget = {
  bucket: string;
  key: string;
  metadata: Record<string, string>;
  sha256Hex: string;
  now: number;
};

/** The presigner and its S3 client, loaded on the first upload (a chunk of its own: most calls need neither). */
function presignerOnFirstUse(
  pipeline: Pick<JobSide, 'config'>,
): (target: PresignTarget) => Promise<InboxUpload> {
  let loading:
    | Promise<{
        s3: S3Client;
        presign: typeof import('../../backends/aws/s3-inbox-upload').presignInboxUpload;
      }>
    | undefined;
  return async (target) => {
    loading ??= Promise.all([
      import('../../backends/aws/s3-inbox-upload'),
      import('../../backends/aws/s3-client'),
    ]).then(([{ presignInboxUpload }, { createS3Client }]) => ({
      s3: createS3Client(awsClientConfig(pipeline.config)),
      presign: presignInboxUpload,
    }));
    loading.catch(() => {
      loading = undefined;
    });
    const { s3, presign } = await loading;
    return presign(s3, target);
  };
}

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
  const presign = presignerOnFirstUse(pipeline);
  /** Documents (rather than a manifest) are not taken here yet: said so, with what to do instead. */
  const noDocuments = (body: unknown) => {
    if (typeof body === 'object' && body !== null && 'documents' in body)
      throw new ApiError(
        400,
        'invalid-request',
        'body.documents: the AWS job API takes a manifest from the dashboard, not documents; upload a folder of documents with opflow ingest <folder> --workflow <name> (it sends them to the inbox)',
      );
  };
  return [
    jobInputRoute(deps),
    apiRoute('checkBatchUpload', async (_params, _request, { tenant, body }) => {
      noDocuments(body());
      const { check, summary } = await loadChecker();
      const checked = await check(parse(manifestUploadBodySchema, body(), 'body'), tenant);
      return json(200, { dryRun: true, batchId: checked.prepared.batchId, ...summary(checked) });
    }),
    apiRoute('startBatchUpload', async (_params, _request, { tenant, body }) => {
      noDocuments(body());
      const parsed = parse(manifestUploadBodySchema, body(), 'body');
      const { check, summary, refuseToStart } = await loadChecker();
      const checked = await check(parsed, tenant);
      refuseToStart(checked, parsed.maxUnits);
      const { prepared } = checked;
      const upload = await presign({
        bucket,
        key: prepared.source.uri.slice(inBucket.length),
        metadata: inboxMetadataFor(prepared.request.tenant, prepared.batchId, prepared.request.options),
        sha256Hex: prepared.hash,
        now: deps.clock.now(),
      });
      return json(202, { batchId: prepared.batchId, upload, ...summary(checked) });
    }),
  ];
}
