/**
 * ReportStore on S3: every object server-side encrypted (SSE-S3, or SSE-KMS with a key id), with
 * its content type, and readable by others only through short-lived presigned GET links.
 */

import { Readable } from 'node:stream';
import {
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ReportStore, StoredObject } from '../../engine/ports';
import { AwsBackendError, AwsConfigError } from './errors';

/** S3 refuses presigned links that live longer than seven days. */
const maxLinkSeconds = 7 * 24 * 3600;

export interface S3ReportStoreOptions {
  client: S3Client;
  bucket: string;
  /** A KMS key id or ARN: objects are then written with `aws:kms` instead of `AES256`. */
  kmsKeyId?: string | undefined;
  /** Lifetime of `link()` URLs when the caller gives none (default 15 minutes). */
  defaultLinkSeconds?: number | undefined;
}

function checkKey(key: string): void {
  if (key.length === 0 || key.startsWith('/') || key.length > 1024) {
    throw new AwsBackendError(`report key ${JSON.stringify(key.slice(0, 80))} is not a valid S3 key`);
  }
}

export class S3ReportStore implements ReportStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly kmsKeyId: string | undefined;
  private readonly defaultLinkSeconds: number;

  constructor(options: S3ReportStoreOptions) {
    if (!options.bucket) throw new AwsConfigError('S3ReportStore needs a bucket name');
    this.client = options.client;
    this.bucket = options.bucket;
    this.kmsKeyId = options.kmsKeyId || undefined;
    this.defaultLinkSeconds = options.defaultLinkSeconds ?? 900;
  }

  async put(key: string, body: Uint8Array | string, contentType: string): Promise<void> {
    checkKey(key);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
        ContentType: contentType,
        ...(this.kmsKeyId
          ? { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: this.kmsKeyId }
          : { ServerSideEncryption: 'AES256' }),
      }),
    );
  }

  /** A multipart upload of 5 MB parts (one PUT when smaller): memory stays a few parts whatever the size. */
  async putStream(key: string, body: AsyncIterable<Uint8Array | string>, contentType: string): Promise<void> {
    checkKey(key);
    const upload = new Upload({
      client: this.client,
      queueSize: 2,
      partSize: 5 * 1024 * 1024,
      params: {
        Bucket: this.bucket,
        Key: key,
        Body: Readable.from(asBuffers(body)),
        ContentType: contentType,
        ...(this.kmsKeyId
          ? { ServerSideEncryption: 'aws:kms' as const, SSEKMSKeyId: this.kmsKeyId }
          : { ServerSideEncryption: 'AES256' as const }),
      },
    });
    await upload.done();
  }

  async get(key: string): Promise<StoredObject | undefined> {
    checkKey(key);
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!answer.Body)
        return { body: new Uint8Array(), contentType: answer.ContentType ?? 'application/octet-stream' };
      return {
        body: await answer.Body.transformToByteArray(),
        contentType: answer.ContentType ?? 'application/octet-stream',
      };
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  /** Every key under `prefix`, in key order (all pages). */
  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const item of page.Contents ?? []) if (item.Key) keys.push(item.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  /** A presigned GET URL, valid for `ttlSeconds` (default 15 minutes, at most seven days). */
  async link(key: string, ttlSeconds?: number): Promise<string> {
    checkKey(key);
    const expiresIn = Math.min(
      maxLinkSeconds,
      Math.max(1, Math.floor(ttlSeconds ?? this.defaultLinkSeconds)),
    );
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn });
  }
}

async function* asBuffers(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<Buffer> {
  for await (const chunk of body)
    yield typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
}
