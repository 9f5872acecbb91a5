// S3ReportStore on fauxqs: encryption headers on every write, content types, paging of list(),
// and presigned links that a plain HTTP client can fetch and that expire as asked.
import { S3Client } from '@aws-sdk/client-s3';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import { awsClientConfig, S3ReportStore } from '../../../../shared/backends/aws';
import { s3ReportStoreOnFirstUse } from '../../../../shared/backends/aws/s3-report-store-on-first-use';

let emulators: AwsEmulators;
beforeAll(async () => {
  emulators = await startAwsEmulators({ dynamoDb: false, secretsManager: false });
});
afterAll(async () => {
  await emulators?.stop();
});

/** An S3 client that remembers the headers of every request it sends. */
function headerRecordingClient() {
  const client = new S3Client({
    region: emulators.region,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    endpoint: emulators.fauxqs!.address,
    forcePathStyle: true,
  });
  const sent: Record<string, string>[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      sent.push({ ...(args.request as { headers: Record<string, string> }).headers });
      return next(args);
    },
    { step: 'finalizeRequest', name: 'recordHeaders' },
  );
  return { client, sent };
}

describe('S3ReportStore', () => {
  it('writes every object with SSE-S3 and its content type', async () => {
    const { client, sent } = headerRecordingClient();
    const reports = new S3ReportStore({ client, bucket: emulators.createBucket() });
    await reports.put('reports/J1/report.html', '<p>hi</p>', 'text/html; charset=utf-8');
    expect(sent[0]).toMatchObject({
      'x-amz-server-side-encryption': 'AES256',
      'content-type': 'text/html; charset=utf-8',
    });
    expect(sent[0]).not.toHaveProperty('x-amz-server-side-encryption-aws-kms-key-id');
    expect((await reports.get('reports/J1/report.html'))?.contentType).toBe('text/html; charset=utf-8');
    client.destroy();
  });

  it('writes with SSE-KMS when a key id is configured', async () => {
    const { client, sent } = headerRecordingClient();
    const reports = new S3ReportStore({ client, bucket: emulators.createBucket(), kmsKeyId: 'alias/opflow' });
    await reports.put('reports/J2/result.json', '{}', 'application/json');
    expect(sent[0]).toMatchObject({
      'x-amz-server-side-encryption': 'aws:kms',
      'x-amz-server-side-encryption-aws-kms-key-id': 'alias/opflow',
    });
    client.destroy();
  });

  it('lists past one page of keys', async () => {
    const reports = new S3ReportStore({ client: emulators.clients.s3, bucket: emulators.createBucket() });
    const keys = Array.from(
      { length: 1_005 },
      (_, i) => `reports/J3/attachments/${String(i).padStart(4, '0')}.pdf`,
    );
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(keys.slice(i, i + 50).map((key) => reports.put(key, 'x', 'application/pdf')));
    }
    expect(await reports.list('reports/J3/')).toEqual(keys);
  });

  it('links with a 15-minute presigned GET by default, fetchable without credentials', async () => {
    const reports = new S3ReportStore({ client: emulators.clients.s3, bucket: emulators.createBucket() });
    await reports.put('reports/J4/report.md', '# Report ✓', 'text/markdown; charset=utf-8');
    const link = new URL(await reports.link('reports/J4/report.md'));
    expect(link.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(link.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(link.pathname).toMatch(/\/reports\/J4\/report\.md$/);
    const answer = await request(link);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(await answer.body.text()).toBe('# Report ✓');
  });

  it('honours the asked lifetime, within what S3 allows', async () => {
    const reports = new S3ReportStore({ client: emulators.clients.s3, bucket: emulators.createBucket() });
    const expires = async (ttl?: number) =>
      new URL(await reports.link('reports/J5/x', ttl)).searchParams.get('X-Amz-Expires');
    expect(await expires(60)).toBe('60');
    expect(await expires(30 * 24 * 3600)).toBe(String(7 * 24 * 3600));
    const short = new S3ReportStore({
      client: emulators.clients.s3,
      bucket: emulators.createBucket(),
      defaultLinkSeconds: 120,
    });
    expect(new URL(await short.link('reports/J5/x')).searchParams.get('X-Amz-Expires')).toBe('120');
  });

  it('refuses keys S3 would misread', async () => {
    const reports = new S3ReportStore({ client: emulators.clients.s3, bucket: emulators.createBucket() });
    await expect(reports.put('', 'x', 'text/plain')).rejects.toThrow(/not a valid S3 key/);
    await expect(reports.get('/reports/x')).rejects.toThrow(/not a valid S3 key/);
  });
});

describe('s3ReportStoreOnFirstUse (the api and schedules functions: S3 loaded on first use)', () => {
  const clientConfig = () =>
    awsClientConfig({
      region: emulators.region,
      endpointUrl: emulators.fauxqs!.address,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });

  it('writes, streams, reads, lists and links as S3ReportStore does, with the S3 client it builds', async () => {
    const bucket = emulators.createBucket();
    const reports = s3ReportStoreOnFirstUse({ clientConfig: clientConfig(), bucket });
    await reports.put('reports/J7/report.md', '# hi', 'text/markdown');
    await reports.putStream?.(
      'reports/J7/summary.csv',
      (async function* () {
        yield 'a,b\n';
        yield new TextEncoder().encode('1,2\n');
      })(),
      'text/csv',
    );
    const stored = await reports.get('reports/J7/summary.csv');
    expect(stored?.contentType).toBe('text/csv');
    expect(Buffer.from(stored!.body).toString('utf8')).toBe('a,b\n1,2\n');
    expect((await reports.list('reports/J7/')).sort()).toEqual([
      'reports/J7/report.md',
      'reports/J7/summary.csv',
    ]);
    // What the eager store reads, written by the lazy one (same bucket, same keys).
    const eager = new S3ReportStore({ client: emulators.clients.s3, bucket });
    expect(Buffer.from((await eager.get('reports/J7/report.md'))!.body).toString('utf8')).toBe('# hi');
    const link = await reports.link('reports/J7/report.md', 60);
    const answer = await request(link);
    expect(answer.statusCode).toBe(200);
    expect(await answer.body.text()).toBe('# hi');
  });

  it('uses the S3 client it is given, and refuses a missing bucket at once', async () => {
    const { client, sent } = headerRecordingClient();
    const reports = s3ReportStoreOnFirstUse({
      clientConfig: clientConfig(),
      client,
      bucket: emulators.createBucket(),
    });
    await reports.put('reports/J8/x', 'x', 'text/plain');
    expect(sent).toHaveLength(1);
    expect(() => s3ReportStoreOnFirstUse({ clientConfig: clientConfig(), bucket: '' })).toThrow(/bucket/);
    client.destroy();
  });
});
