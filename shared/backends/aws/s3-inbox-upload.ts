/**
 * A presigned PUT of one object under the report bucket's `inbox/`, for a browser to upload a
 * manifest the api has checked (`POST /batch-uploads` on aws): the key, the object's metadata
 * (tenant, batch, options) and the content's SHA-256 are signed, so the URL stores exactly the
 * checked bytes under that key, with that metadata, until it expires (a document's PUT signs its
 * length too: `content-length` is a signed header, which the browser sets from the body). The caller needs no AWS
 * credentials; the signature is the api role's (which may PutObject under `inbox/`).
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

export interface InboxUpload {
  method: 'PUT';
  url: string;
  /** Headers the PUT must carry as they are (signed): the content's SHA-256 and the object's metadata. */
  headers: Record<string, string>;
  /** ISO time after which S3 refuses the URL. */
  expiresAt: string;
}

/** How long a presigned upload works: long enough to send a large manifest, short enough not to linger. */
export const inboxUploadSeconds = 15 * 60;

/** What a presigned PUT is bound to: the key, the object's metadata and the content's SHA-256 (and length). */
export interface PresignTarget {
  bucket: string;
  key: string;
  metadata: Record<string, string>;
  sha256Hex: string;
  now: number;
  /** The body's length in bytes, signed (the browser sends it as Content-Length): S3 takes no other. */
  contentLength?: number | undefined;
}

export async function presignInboxUpload(s3: S3Client, target: PresignTarget): Promise<InboxUpload> {
  const checksum = Buffer.from(target.sha256Hex, 'hex').toString('base64');
  const command = new PutObjectCommand({
    Bucket: target.bucket,
    Key: target.key,
    Metadata: target.metadata,
    ChecksumSHA256: checksum,
    ...(target.contentLength === undefined ? {} : { ContentLength: target.contentLength }),
  });
  // The checksum and the metadata stay signed headers the browser sends as they are (S3 checks the
  // body against the checksum), rather than query parameters: what every S3 stores as metadata.
  const headers: Record<string, string> = {
    'x-amz-checksum-sha256': checksum,
    ...Object.fromEntries(
      Object.entries(target.metadata).map(([name, value]) => [`x-amz-meta-${name.toLowerCase()}`, value]),
    ),
  };
  const url = await getSignedUrl(s3, command, {
    expiresIn: inboxUploadSeconds,
    unhoistableHeaders: new Set(Object.keys(headers)),
  });
  return {
    method: 'PUT',
    url,
    headers,
    expiresAt: new Date(target.now + inboxUploadSeconds * 1000).toISOString(),
  };
}
