/**
 * The report bucket's `inbox/`: what the ingest function reads (a manifest by byte ranges, the
 * documents it names, an uploaded document and its metadata) and what `opflow --backend aws ingest`
 * writes there; and the S3 event the bucket's notification hands the function for a new object.
 */

import type { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

export interface InboxObject {
  bucket: string;
  key: string;
}

/** Opens the object's bytes from `start` on (a ranged GET), as a stream. */
export function openS3Object(s3: S3Client, object: InboxObject) {
  return async (start: number): Promise<Readable> => {
    const answer = await s3.send(
      new GetObjectCommand({
        Bucket: object.bucket,
        Key: object.key,
        ...(start > 0 ? { Range: `bytes=${start}-` } : {}),
      }),
    );
    return answer.Body as Readable;
  };
}

/**
 * The whole object; a missing one throws with `code` NoSuchKey (as a missing file's ENOENT). With
 * `maxBytes`, a larger object is refused from its Content-Length, before its body is read.
 */
export async function readS3Object(
  s3: S3Client,
  object: InboxObject,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<Uint8Array> {
  try {
    const answer = await s3.send(new GetObjectCommand({ Bucket: object.bucket, Key: object.key }));
    if ((answer.ContentLength ?? 0) > maxBytes) {
      (answer.Body as { destroy?: () => void } | undefined)?.destroy?.();
      throw Object.assign(
        new Error(
          `too large (${Math.round((answer.ContentLength ?? 0) / 1024 / 1024)} MB; at most ${Math.round(maxBytes / 1024 / 1024)} MB)`,
        ),
        { code: 'EFBIG' },
      );
    }
    return await (answer.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'NoSuchKey' || name === 'NotFound')
      throw Object.assign(new Error(`s3://${object.bucket}/${object.key} does not exist`), {
        code: 'NoSuchKey',
      });
    throw error;
  }
}

/** What the bucket holds under an object's key (HeadObject). */
export interface InboxHead {
  size: number | undefined;
  /** The whole object's SHA-256 in base64, where S3 keeps one and it was asked for (`checksum`). */
  checksumSha256?: string | undefined;
  /** Its user metadata (`x-amz-meta-*`), names in lower case. */
  metadata: Record<string, string>;
}

/**
 * The object's size and user metadata, and with `checksum` its SHA-256 where S3 keeps one for the
 * whole object (not a multipart upload's checksum of checksums); undefined when there is no such
 * object. (Every function whose code reaches this file holds all of it: keep it small.)
 */
export async function headInboxObject(
  s3: S3Client,
  object: InboxObject,
  checksum?: boolean,
): Promise<InboxHead | undefined> {
  try {
    const answer = await s3.send(
      new HeadObjectCommand({
        Bucket: object.bucket,
        Key: object.key,
        ChecksumMode: checksum ? 'ENABLED' : undefined,
      }),
    );
    return {
      size: answer.ContentLength,
      checksumSha256: answer.ChecksumSHA256?.includes('-') ? undefined : answer.ChecksumSHA256,
      metadata: Object.fromEntries(
        Object.entries(answer.Metadata ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
      ),
    };
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'NotFound' || name === 'NoSuchKey') return undefined;
    throw error;
  }
}

/** The object's user metadata (`x-amz-meta-*`, names in lower case), or undefined when it is gone. */
export async function inboxMetadata(
  s3: S3Client,
  object: InboxObject,
): Promise<Record<string, string> | undefined> {
  return (await headInboxObject(s3, object))?.metadata;
}

/**
 * Writes an object under `inbox/` (what `opflow ingest` uploads; the manifest a documents upload's
 * commit writes last, with its `contentType`).
 */
export async function putInboxObject(
  s3: S3Client,
  object: InboxObject,
  body: Uint8Array | string,
  metadata: Record<string, string> = {},
  contentType?: string,
): Promise<{ etag?: string | undefined }> {
  const answer = await s3.send(
    new PutObjectCommand({
      Bucket: object.bucket,
      Key: object.key,
      Body: body,
      Metadata: metadata,
      ContentType: contentType,
    }),
  );
  return { etag: answer.ETag?.replace(/"/g, '') };
}

/**
 * The S3 event the bucket's notification sends the ingest function for a new object (the shape the
 * function reads; aws-local and the e2e harness deliver it as S3 and Lambda's async invoke do).
 */
export function s3CreatedEvent(
  object: InboxObject,
  etag?: string,
  detail: { eventName?: string; size?: number; sequencer?: string } = {},
): { Records: Record<string, unknown>[] } {
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: 'us-east-1',
        eventTime: new Date().toISOString(),
        eventName: detail.eventName ?? 'ObjectCreated:Put',
        s3: {
          s3SchemaVersion: '1.0',
          bucket: { name: object.bucket, arn: `arn:aws:s3:::${object.bucket}` },
          object: {
            key: encodeURIComponent(object.key).replace(/%2F/g, '/').replace(/%20/g, '+'),
            ...(detail.size !== undefined ? { size: detail.size } : {}),
            ...(etag ? { eTag: etag } : {}),
            ...(detail.sequencer ? { sequencer: detail.sequencer } : {}),
          },
        },
      },
    ],
  };
}
