/**
 * What S3 checks of a presigned PUT, done here with the AWS SDK's own SigV4 signer
 * (@smithy/signature-v4), for the request a browser sends: the URL's query authenticates it, and
 * its signature covers every header named in `X-Amz-SignedHeaders` with the value the request
 * carries. S3 recomputes that signature and refuses the request (403 SignatureDoesNotMatch) when it
 * differs; the payload of a presigned request is `UNSIGNED-PAYLOAD`, so the body is bound through a
 * signed `x-amz-checksum-sha256`, which S3 holds the body to (400 BadDigest).
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity.html
 */
import { createHash } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity } from '@smithy/types';

/** The SDK's own SHA-256 (what the S3 client signs with), for the signer. */
const sdkSha256 = new S3Client({ region: 'us-east-1' }).config.sha256;

/** The query parameters the signer writes itself (SigV4's authentication parameters). */
const authParameters = [
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
  'X-Amz-Security-Token',
];

/** A presigned URL's authentication, as S3 reads it from the query. */
export interface PresignedQuery {
  accessKeyId: string;
  region: string;
  service: string;
  signingDate: Date;
  expiresIn: number;
  signedHeaders: string[];
  signature: string;
}

export function presignedQuery(url: string): PresignedQuery {
  const query = new URL(url).searchParams;
  const required = (name: string) => {
    const value = query.get(name);
    if (value === null) throw new Error(`the presigned URL has no ${name}`);
    return value;
  };
  if (required('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') throw new Error('not a SigV4 presigned URL');
  const [accessKeyId, , region, service] = required('X-Amz-Credential').split('/');
  const stamp = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(required('X-Amz-Date'));
  if (!stamp) throw new Error(`X-Amz-Date is not a SigV4 time: ${query.get('X-Amz-Date')}`);
  const [, year, month, day, hour, minute, second] = stamp;
  return {
    accessKeyId: accessKeyId!,
    region: region!,
    service: service!,
    signingDate: new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}Z`),
    expiresIn: Number(required('X-Amz-Expires')),
    signedHeaders: required('X-Amz-SignedHeaders').split(';'),
    signature: required('X-Amz-Signature'),
  };
}

/** A request as a browser sends it: the URL, the headers it sets, and the body. */
export interface SentPut {
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/**
 * The signature S3 computes for `sent`: the URL's query but its signature, and each signed header
 * with the value `sent` carries (`host` from the URL). Throws, as S3 refuses, when a signed header
 * is missing from the request.
 */
export async function signatureOf(sent: SentPut, credentials: AwsCredentialIdentity): Promise<string> {
  const url = new URL(sent.url);
  const auth = presignedQuery(sent.url);
  const given = Object.fromEntries(
    Object.entries(sent.headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const headers: Record<string, string> = {};
  for (const name of auth.signedHeaders) {
    // The browser sets Content-Length itself, from the body (no page can set it otherwise).
    const value =
      name === 'host'
        ? url.host
        : name === 'content-length'
          ? (given[name] ?? String(Buffer.byteLength(sent.body)))
          : given[name];
    if (value === undefined) throw new Error(`the request lacks the signed header ${name}`);
    headers[name] = value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams)
    if (!authParameters.includes(name) && name !== 'X-Amz-Content-Sha256') query[name] = value;
  const signer = new SignatureV4({
    credentials,
    region: auth.region,
    service: auth.service,
    sha256: sdkSha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const signed = await signer.presign(
    {
      method: 'PUT',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      // The path as sent, URI-encoded once (S3's canonical URI: a key's space is %20, its ( %28).
      path: url.pathname,
      query,
      // A presigned request's payload is not hashed: S3 takes the constant (moved to the query, as the URL has it).
      headers: {
        ...headers,
        'X-Amz-Content-Sha256': url.searchParams.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD',
      },
    },
    {
      signingDate: auth.signingDate,
      expiresIn: auth.expiresIn,
      unhoistableHeaders: new Set(auth.signedHeaders),
    },
  );
  if (signed.query?.['X-Amz-SignedHeaders'] !== auth.signedHeaders.join(';'))
    throw new Error(
      `the signer signed ${String(signed.query?.['X-Amz-SignedHeaders'])}, the URL says ${auth.signedHeaders.join(';')}`,
    );
  return String(signed.query?.['X-Amz-Signature']);
}

/** The base64 SHA-256 of a body, as `x-amz-checksum-sha256` carries it. */
export const checksumOf = (body: string | Uint8Array) => createHash('sha256').update(body).digest('base64');
