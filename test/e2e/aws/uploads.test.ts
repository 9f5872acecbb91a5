// The dashboard's start routes on the aws backend, through the bundled api function behind the
// gateway stand-in, on the emulators (S3 is fauxqs', behind the proxy that sends S3's event
// notifications): "run again like this" reads a job's input back; a manifest is checked line by
// line with its estimate, then POST /batch-uploads answers a presigned PUT that the test sends as a
// browser would, straight to S3 under inbox/; the bucket's notification invokes the bundled ingest
// function asynchronously, which starts the batch the answer named, and the step workers run its
// items. The same file again is the same batch. The emulator ignores
// signatures, so the PUT's signature is checked as S3 would (test/support/presigned-put.ts).
import { createHash } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { Document, Packer, Paragraph } from 'docx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshFetch } from '../../support/fresh-fetch';
import { type InboxUploads, inboxUploads } from '../../support/inbox-uploads';
import { presignedQuery, signatureOf } from '../../support/presigned-put';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

let world: AwsWorld;
let inbox: InboxUploads;

beforeAll(async () => {
  world = await AwsWorld.start({ workers: 1, inbox: true });
  inbox = inboxUploads(world);
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

const manifest = [
  '{"id":"a","query":"TTL:(folding hinge)","title":"Hinge"}',
  '{"id":"b","query":"TTL:(magnetic latch)","title":"Latch"}',
  '{"id":"c","title":"No query"}',
  '{"id":"d","query":"TTL:(helmet shell)","title":"Shell"}',
].join('\n');
const upload = { fileName: 'hinges.jsonl', manifest, workflow: 'patent-count', selection: 'auto' };

describe('the dashboard start routes on AWS', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('GET /jobs/{id}/input gives back what a job was started with, for "run again like this"', async () => {
    const id = await world.submit({
      workflow: 'patent-count',
      input: { query: 'foldable hinge' },
      label: 'hinges',
      priority: 'high',
      maxUnits: 50,
    });
    const answer = await world.api('GET', `/jobs/${id}/input`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      jobId: id,
      workflow: 'patent-count',
      input: { query: 'foldable hinge' },
      label: 'hinges',
      selection: { mode: 'auto' },
      priority: 'high',
      maxUnits: 50,
      tenant: 'default',
    });
    expect((await world.api('GET', '/jobs/01NOSUCHJOB0000000000000000/input')).status).toBe(404);
    // Another tenant's caller does not see it.
    world.gateway.claims = { sub: 'user-2', tenant: 'acme' };
    try {
      expect((await world.api('GET', `/jobs/${id}/input`)).status).toBe(404);
    } finally {
      world.gateway.claims = undefined;
    }
  });

  it('checks a manifest, presigns its PUT under inbox/, and the ingest function starts the batch named in the answer', async () => {
    const checked = await world.api('POST', '/batch-uploads/check', { body: upload });
    expect(checked.status).toBe(200);
    expect(checked.body).toMatchObject({ dryRun: true, records: 4, items: 3, problemCount: 1 });
    expect(checked.body.problems).toEqual([
      expect.objectContaining({ position: 'line 3', id: 'c', reason: expect.stringMatching(/query/) }),
    ]);
    const batchId = checked.body.batchId as string;
    expect(batchId).toMatch(/^hinges-[0-9a-f]{8}$/);

    const started = await world.api('POST', '/batch-uploads', { body: upload });
    expect(started.status).toBe(202);
    const { upload: put } = started.body as unknown as {
      upload: { method: string; url: string; headers: Record<string, string>; expiresAt: string };
    };
    expect(started.body.batchId).toBe(batchId);
    expect(put.method).toBe('PUT');
    expect(put.url).toContain(`/${world.bucket}/inbox/patent-count/${batchId}/hinges.jsonl?`);
    expect(put.url).toMatch(/X-Amz-Signature=/);
    expect(put.headers['x-amz-checksum-sha256']).toBe(
      Buffer.from((await import('node:crypto')).createHash('sha256').update(manifest).digest()).toString(
        'base64',
      ),
    );
    expect(Date.parse(put.expiresAt) - world.now()).toBe(15 * 60_000);
    // The emulator ignores signatures: the binding is checked here as S3 checks it. The checksum and
    // the metadata are signed headers, and the signature is the one S3 computes for the PUT the page sends.
    const auth = presignedQuery(put.url);
    expect(auth.signedHeaders).toEqual(
      expect.arrayContaining([
        'x-amz-checksum-sha256',
        'x-amz-meta-opflow-tenant',
        'x-amz-meta-opflow-batch',
      ]),
    );
    const credentials = {
      accessKeyId: world.env.AWS_ACCESS_KEY_ID!,
      secretAccessKey: world.env.AWS_SECRET_ACCESS_KEY!,
    };
    const browserPut = { url: put.url, headers: put.headers, body: manifest };
    expect(await signatureOf(browserPut, credentials)).toBe(auth.signature);
    const otherTenant = { ...put.headers, 'x-amz-meta-opflow-tenant': 'acme' };
    expect(await signatureOf({ ...browserPut, headers: otherTenant }, credentials)).not.toBe(auth.signature);
    // Nothing is started before the manifest is in the bucket.
    expect(await inbox.batches.get(batchId)).toBeUndefined();

    // The browser's PUT, straight to S3 (on a connection of its own: test/support/fresh-fetch.ts).
    const sent = await freshFetch(put.url, { method: put.method, headers: put.headers, body: manifest });
    expect(sent.status, await sent.clone().text()).toBe(200);
    const key = `inbox/patent-count/${batchId}/hinges.jsonl`;
    const head = await world.emulators.clients.s3.send(
      new HeadObjectCommand({ Bucket: world.bucket, Key: key }),
    );
    expect(head.Metadata).toMatchObject({ 'opflow-tenant': 'default', 'opflow-batch': batchId });
    // The PUT went through S3's notification for inbox/: one asynchronous invocation queued.
    expect(world.inbox!.proxy.created).toContainEqual({
      bucket: world.bucket,
      key,
      eventName: 'ObjectCreated:Put',
    });
    expect(world.inbox!.invoker.waiting).toBe(1);

    const batch = await inbox.settleBatch(batchId);
    expect(batch).toMatchObject({
      status: 'FINISHED',
      items: 3,
      counts: { records: 4, created: 3, invalid: 1 },
    });
    expect(batch.settled).toMatchObject({ succeeded: 3, failed: 0 });
    const shown = await world.api('GET', `/batches/${batchId}`);
    expect(shown.status).toBe(200);

    // The same file again: the same batch, whose items all exist; nothing new runs.
    const again = await world.api('POST', '/batch-uploads/check', { body: upload });
    expect(again.body).toMatchObject({ batchId, existing: 3 });
  });

  it('refuses what cannot start, naming the field: an unknown workflow, a manifest with no usable line, documents inline', async () => {
    const unknown = await world.api('POST', '/batch-uploads', { body: { ...upload, workflow: 'no-such' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error?.message).toMatch(/^body\.workflow: no workflow no-such/);
    const empty = await world.api('POST', '/batch-uploads', {
      body: { ...upload, fileName: 'bad.jsonl', manifest: '{"id":"x","title":"No query"}' },
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error?.message).toMatch(/no line of it can be used/);
    // Documents inline (base64) are not taken on aws (its request body is bounded): said so, with what does it.
    const documents = {
      documents: [
        { name: 'hinge.txt', content: Buffer.from('A hinge that folds twice.').toString('base64') },
      ],
      workflow: 'novelty-check',
    };
    for (const path of ['/batch-uploads', '/batch-uploads/check']) {
      const refused = await world.api('POST', path, { body: documents });
      expect(refused.status, path).toBe(400);
      expect(refused.body.error?.message).toMatch(
        /^body\.documents: the AWS job API takes documents by presigned upload, not in the body: send documentFiles/,
      );
    }
  });

  it('documents by presigned PUTs: checked and estimated, one PUT each bound to its length, SHA-256 and metadata; the batch starts only at the commit, once every document is there', async () => {
    const docx = await Packer.toBuffer(
      new Document({ sections: [{ children: [new Paragraph('TTL:(hinge damper)')] }] }),
    );
    const files: Record<string, Uint8Array> = {
      'valve.md': new TextEncoder().encode('# Valve\n\nTTL:(check valve)\n'),
      'hinge damper.docx': new Uint8Array(docx),
      'notes.txt': new TextEncoder().encode('TTL:(drain pump)'),
    };
    const announced = Object.entries(files).map(([name, bytes]) => ({
      name,
      size: bytes.byteLength,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    }));
    const body = { documentFiles: announced, workflow: 'patent-count', selection: 'auto' };

    const checked = await world.api('POST', '/batch-uploads/check', { body });
    expect(checked.status, JSON.stringify(checked.body)).toBe(200);
    expect(checked.body).toMatchObject({ dryRun: true, records: 3, items: 3, existing: 0, problemCount: 0 });
    expect(checked.body.reading).toMatch(/read when the ingest function takes the batch/);
    const batchId = checked.body.batchId as string;
    expect(batchId).toMatch(/^documents-[0-9a-f]{8}$/);

    const started = await world.api('POST', '/batch-uploads', { body });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body).toMatchObject({
      batchId,
      commit: { method: 'POST', path: '/batch-uploads/commit' },
    });
    const uploads = started.body.uploads as {
      name: string;
      method: string;
      url: string;
      headers: Record<string, string>;
      expiresAt: string;
    }[];
    expect(uploads.map((entry) => entry.name)).toEqual(['hinge damper.docx', 'notes.txt', 'valve.md']);
    const credentials = {
      accessKeyId: world.env.AWS_ACCESS_KEY_ID!,
      secretAccessKey: world.env.AWS_SECRET_ACCESS_KEY!,
    };
    for (const put of uploads) {
      const bytes = files[put.name]!;
      expect(decodeURIComponent(new URL(put.url).pathname)).toBe(
        `/${world.bucket}/inbox/patent-count/${batchId}/${put.name}`,
      );
      expect(Date.parse(put.expiresAt) - world.now()).toBe(15 * 60_000);
      expect(put.headers).toMatchObject({
        'x-amz-checksum-sha256': createHash('sha256').update(bytes).digest('base64'),
        'x-amz-meta-opflow-role': 'manifest-file',
        'x-amz-meta-opflow-batch': batchId,
        'x-amz-meta-opflow-tenant': 'default',
      });
      // As S3 checks it: the length, checksum and metadata are signed; another length or tenant is refused.
      const auth = presignedQuery(put.url);
      expect(auth.signedHeaders).toEqual(
        expect.arrayContaining(['content-length', 'x-amz-checksum-sha256', 'x-amz-meta-opflow-role']),
      );
      const sent = { url: put.url, headers: put.headers, body: bytes };
      expect(await signatureOf(sent, credentials)).toBe(auth.signature);
      expect(await signatureOf({ ...sent, body: new Uint8Array([...bytes, 32]) }, credentials)).not.toBe(
        auth.signature,
      );
      expect(
        await signatureOf(
          { ...sent, headers: { ...put.headers, 'x-amz-meta-opflow-tenant': 'acme' } },
          credentials,
        ),
      ).not.toBe(auth.signature);
      // No URL with its signature is written to the api's log.
      expect(JSON.stringify(world.lines)).not.toContain(auth.signature);
    }

    // Two of the three sent, as a browser does; their arrival starts nothing.
    const send = (put: (typeof uploads)[number]) =>
      freshFetch(put.url, { method: put.method, headers: put.headers, body: files[put.name]! });
    for (const put of uploads.filter((entry) => entry.name !== 'notes.txt'))
      expect((await send(put)).status).toBe(200);
    await inbox.deliverUntil(async () => world.inbox!.invoker.waiting === 0, 'the documents events');
    expect(await inbox.batches.get(batchId)).toBeUndefined();

    // The commit finds one missing: refused, naming it; still nothing started.
    const early = await world.api('POST', '/batch-uploads/commit', { body });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatchObject({
      code: 'not-uploaded',
      issues: [{ path: 'body.documentFiles[2]', message: 'notes.txt: not uploaded yet' }],
    });
    expect(await inbox.batches.get(batchId)).toBeUndefined();

    // The failed one sent again, then the commit writes the manifest last and the batch runs every document.
    expect((await send(uploads.find((entry) => entry.name === 'notes.txt')!)).status).toBe(200);
    const committed = await world.api('POST', '/batch-uploads/commit', { body });
    expect(committed.status, JSON.stringify(committed.body)).toBe(202);
    expect(committed.body).toEqual({ batchId, committed: 3 });
    const batch = await inbox.settleBatch(batchId);
    expect(batch).toMatchObject({
      status: 'FINISHED',
      items: 3,
      counts: { records: 3, created: 3, invalid: 0 },
    });
    expect(batch.settled).toMatchObject({ succeeded: 3, failed: 0 });
    const items = await world.api('GET', `/batches/${batchId}`);
    expect(items.status).toBe(200);

    // The same documents again: the same batch, every item ingested before; a second commit starts nothing twice.
    const again = await world.api('POST', '/batch-uploads/check', { body });
    expect(again.body).toMatchObject({ batchId, existing: 3, toRun: {} });
    expect((await world.api('POST', '/batch-uploads/commit', { body })).status).toBe(202);
    const after = await inbox.settleBatch(batchId);
    expect(after.items).toBe(3);
    expect(after.settled).toMatchObject({ succeeded: 3 });
  });

  it("documents: a tenant-bound caller's PUTs go under its tenant's prefix; each refusal names the document", async () => {
    const bytes = new TextEncoder().encode('TTL:(rotary latch)');
    const file = {
      name: 'latch.md',
      size: bytes.byteLength,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
    world.gateway.claims = { sub: 'user-2', tenant: 'acme' };
    try {
      const started = await world.api('POST', '/batch-uploads', {
        body: { documentFiles: [file], workflow: 'patent-count', batchName: 'acme-latches' },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      const [put] = started.body.uploads as { url: string; headers: Record<string, string> }[];
      expect(new URL(put!.url).pathname).toBe(
        `/${world.bucket}/inbox/tenants/acme/patent-count/acme-latches/latch.md`,
      );
      expect(put!.headers['x-amz-meta-opflow-tenant']).toBe('acme');
      const elsewhere = await world.api('POST', '/batch-uploads', {
        body: { documentFiles: [file], workflow: 'patent-count', tenant: 'globex' },
      });
      expect(elsewhere.status).toBe(403);
    } finally {
      world.gateway.claims = undefined;
    }
    const refused = await world.api('POST', '/batch-uploads/check', {
      body: {
        documentFiles: [
          file,
          { ...file, name: '../up.md' },
          { ...file, name: 'tool.exe' },
          { ...file, name: 'huge.pdf', size: 60 * 1024 * 1024 },
          { ...file, name: 'LATCH.md' },
        ],
        workflow: 'patent-count',
      },
    });
    expect(refused.status).toBe(400);
    const issues = (refused.body.error as unknown as { issues: { path: string; message: string }[] }).issues;
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'body.documentFiles[1].name' }),
        {
          path: 'body.documentFiles[2].name',
          message: expect.stringMatching(/^tool\.exe: not a document type/),
        },
        {
          path: 'body.documentFiles[3].size',
          message: expect.stringMatching(/^huge\.pdf is 60\.0 MiB; a document may be at most 50 MiB/),
        },
        { path: 'body.documentFiles[4].name', message: 'LATCH.md is there twice; each document once' },
      ]),
    );
  });
});
