// The presigned PUT of a checked manifest (shared/backends/aws/s3-inbox-upload.ts) is bound to what
// was checked, proven without a real S3 (the emulator ignores signatures): the URL's signed headers
// include the checksum and every metadata header; the SigV4 signature recomputed with the SDK's
// signer for the request the dashboard sends (its headers as answered, the manifest as body)
// matches; and a request with another body's checksum or another metadata value, or without a
// signed header, gets another signature, which S3 refuses.
import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { presignInboxUpload } from '../../../../shared/backends/aws/s3-inbox-upload';
import { sha256 } from '../../../../shared/ingest/batch';
import { inboxFolderOf, inboxMetadataFor } from '../../../../shared/ingest/inbox';
import { checksumOf, presignedQuery, type SentPut, signatureOf } from '../../../support/presigned-put';

const credentials = {
  accessKeyId: 'AKIAOPFLOWTEST000001',
  secretAccessKey: 'opflow/test/secret/key/0123456789abcdefgh',
};
const s3 = new S3Client({ region: 'eu-west-1', credentials });

const manifest = ['{"id":"a","query":"TTL:(hinge)"}', '{"id":"b","query":"TTL:(latch)"}'].join('\n');
const batchId = 'hinges-0a1b2c3d';
const metadata = inboxMetadataFor('acme', batchId, { selection: 'auto', inFlight: 50, maxUnits: 200 });
const key = `${inboxFolderOf('acme', 'patent-count', batchId)}hinges.jsonl`;

/** The upload answered, and the request the dashboard's `startBatchUpload` makes of it. */
async function presignedPut(): Promise<SentPut> {
  const upload = await presignInboxUpload(s3, {
    bucket: 'opflow-reports-test',
    key,
    metadata,
    sha256Hex: sha256(manifest),
    now: Date.now(),
  });
  return { url: upload.url, headers: upload.headers, body: manifest };
}

describe('the presigned PUT of a checked manifest', () => {
  it('signs the checksum and every metadata header, with a SigV4 query for 15 minutes', async () => {
    const sent = await presignedPut();
    const url = new URL(sent.url);
    expect(url.hostname).toBe('opflow-reports-test.s3.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe(`/${key}`);
    const auth = presignedQuery(sent.url);
    expect(auth).toMatchObject({ accessKeyId: credentials.accessKeyId, region: 'eu-west-1', service: 's3' });
    expect(auth.expiresIn).toBe(15 * 60);
    expect(auth.signedHeaders).toEqual(
      expect.arrayContaining([
        'host',
        'x-amz-checksum-sha256',
        'x-amz-meta-opflow-tenant',
        'x-amz-meta-opflow-batch',
        'x-amz-meta-opflow-options',
      ]),
    );
    // Nothing the page sends is left unsigned, and none of it travels in the query instead.
    expect(Object.keys(sent.headers).every((name) => auth.signedHeaders.includes(name))).toBe(true);
    expect([...url.searchParams.keys()].filter((name) => /checksum|meta/i.test(name))).toEqual([]);
    // The checksum is the manifest's: what S3 holds the body to.
    expect(sent.headers['x-amz-checksum-sha256']).toBe(checksumOf(manifest));
    expect(sent.headers['x-amz-meta-opflow-tenant']).toBe('acme');
  });

  it('has the signature S3 computes for the request the dashboard sends', async () => {
    const sent = await presignedPut();
    expect(await signatureOf(sent, credentials)).toBe(presignedQuery(sent.url).signature);
    // Header names as a browser may write them: SigV4 lowercases them.
    const shouted = Object.fromEntries(
      Object.entries(sent.headers).map(([name, value]) => [name.toUpperCase(), value]),
    );
    expect(await signatureOf({ ...sent, headers: shouted }, credentials)).toBe(
      presignedQuery(sent.url).signature,
    );
    // Another secret signs differently: the match above is the key's, not a formality.
    expect(
      await signatureOf(sent, { ...credentials, secretAccessKey: `${credentials.secretAccessKey}x` }),
    ).not.toBe(presignedQuery(sent.url).signature);
  });

  it('is refused for another body, other metadata or a signed header left out', async () => {
    const sent = await presignedPut();
    const { signature } = presignedQuery(sent.url);
    // Another body with its own checksum: the signature no longer matches.
    const otherBody = `${manifest}\n{"id":"c","query":"TTL:(more)"}`;
    const swapped = {
      ...sent,
      body: otherBody,
      headers: { ...sent.headers, 'x-amz-checksum-sha256': checksumOf(otherBody) },
    };
    expect(await signatureOf(swapped, credentials)).not.toBe(signature);
    // Another body under the signed checksum: the signature holds, and S3 refuses the body (BadDigest).
    expect(checksumOf(otherBody)).not.toBe(sent.headers['x-amz-checksum-sha256']);
    // Another tenant, batch or options: refused.
    for (const name of ['x-amz-meta-opflow-tenant', 'x-amz-meta-opflow-batch', 'x-amz-meta-opflow-options']) {
      const changed = { ...sent, headers: { ...sent.headers, [name]: `${sent.headers[name]}x` } };
      expect(await signatureOf(changed, credentials), name).not.toBe(signature);
    }
    // Another key: refused.
    expect(
      await signatureOf({ ...sent, url: sent.url.replace('hinges.jsonl', 'other.jsonl') }, credentials),
    ).not.toBe(signature);
    // A signed header left out (the page dropped the checksum): refused.
    const { 'x-amz-checksum-sha256': _dropped, ...without } = sent.headers;
    await expect(signatureOf({ ...sent, headers: without }, credentials)).rejects.toThrow(
      /lacks the signed header x-amz-checksum-sha256/,
    );
  });
});
