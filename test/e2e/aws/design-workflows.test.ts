// The design infringement search and 1v1 on AWS, end to end: each job created through the API with
// its product image given as data (a data URL, as a user's upload would be sent) and by URL, run by
// the bundled step worker under a simulated SQS event source against the sandbox, the image given as
// data uploaded with p010 before the search that reads its URL, and the report (Markdown, HTML,
// result.json) kept in S3 (the emulator) and linked through the API, naming each image without its
// bytes; an image given as data is a file beside the report in S3, named in result.json.
import { tmpdir } from 'node:os';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noKeepAlive } from '../../support/fresh-fetch';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, runOpflow } from '../local/opflow-process';
import { callSequence, lastSeq } from '../workflows/world';
import { AwsWorld } from './harness/aws-world';
import { reportOf } from './ip-reports';

/** A real PNG (48x48), as a product photo would be sent. */
const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAADAAAAAwCAAAAAByaaZbAAAAq0lEQVR42u2WSw6AMAhE5/6XxpgaU8oMLS4aF2WlhIf8SoUVBQd4tU1WgWYsEFD78JQBvRUhoOKHyAPK3gQBlq9+H4DHs9PY6CKkOwJD6gjlIVVyqlhC0oeOACk56XTnxEWrZykAYtRIwOwDnHAAFgB4YH5y9gJYArAT+GGV6p0uz1J9Wm0KJCfO0vVpKwQ70xnBt4Ym1F4yozdCsvkYku/WD9s7XBDnT+CWC0dz1oyW+a8bAAAAAElFTkSuQmCC',
  'base64',
);
const bytesSeen = png.toString('base64').slice(0, 60);

let world: AwsWorld;
beforeAll(async () => {
  world = await AwsWorld.start();
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await world?.stop();
});

describe('opflow on AWS: the design infringement workflows', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('searches two product images, one given as data (uploaded with p010 first) and one by URL, its report in S3', async () => {
    const before = lastSeq(world);
    const id = await world.submit({
      workflow: 'design-infringement-search',
      input: {
        images: [
          { data: `data:image/png;base64,${png.toString('base64')}`, name: 'front.png' },
          { url: 'https://example.com/products/side.jpg' },
        ],
        countries: ['US', 'EU', 'CN'],
        field: 'inflatable swim ring',
      },
    });
    const [job] = await world.settle([id]);
    expect(job!.status, JSON.stringify(job!.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(['p010', 'ai39-1', 'ai39-2', 'ai39-1', 'ai39-2']);
    // The search of the uploaded image reads the URL p010 answered, not the bytes.
    const [upload] = world.sandbox.ledger
      .entries()
      .filter((entry) => entry.seq > before && entry.operationId.startsWith('p010'));
    expect(upload?.httpStatus).toBe(200);
    const { keys, markdown, html, result } = await reportOf(world, id);
    expect(markdown.split('\n')[0]).toBe('# Design infringement search: front.png and side.jpg');
    expect(markdown).toMatch(/\n## Risk conclusion\n\n(High|Medium|Low) risk/);
    expect(markdown).toContain('front.png (PNG, 1 KB, uploaded)');
    expect(markdown).toContain('side.jpg (by URL: https://example.com/products/side.jpg)');
    expect(Object.keys(result.steps)).toEqual(
      expect.arrayContaining(['image-1-upload', 'image-1-submit', 'image-1-result', 'image-2-result']),
    );
    // result.json and report.md name a file in S3 in the bytes' place; report.html holds the image,
    // so it shows from a presigned link as well as from disk.
    for (const text of [markdown, JSON.stringify(result)]) expect(text).not.toContain(bytesSeen);
    expect(markdown).toContain('| front.png | ![front.png](images/1.png) |');
    expect(html).toContain(`<img src="data:image/png;base64,${png.toString('base64')}" alt="front.png">`);
    expect(result.input.images[0]).toEqual({ data: 'images/1.png', name: 'front.png' });
    expect(keys).toContain(`reports/${id}/images/1.png`);
    const stored = await world.reports.get(`reports/${id}/images/1.png`);
    expect(stored?.contentType).toBe('image/png');
    expect(Buffer.from(stored!.body).equals(png)).toBe(true);
    // opflow --backend aws report lists it with a presigned link, as it does the report's files.
    const listed = await runOpflow(['--backend', 'aws', 'report', id, '--json'], {
      env: childEnv(world.env),
      cwd: tmpdir(),
    });
    expect(listed.code, listed.stderr).toBe(0);
    const { images } = JSON.parse(listed.stdout) as { images: string[] };
    expect(images).toHaveLength(1);
    expect(images[0]).toMatch(/\/reports\/\w+\/images\/1\.png\?.*X-Amz-Signature=/);
    const fetched = await request(images[0]!, { dispatcher: noKeepAlive });
    expect(fetched.statusCode).toBe(200);
    expect(Buffer.from(await fetched.body.arrayBuffer()).equals(png)).toBe(true);
  });

  it('compares a product image given as data with one registered design, view by view, its report in S3', async () => {
    const before = lastSeq(world);
    const id = await world.submit({
      workflow: 'design-infringement-1v1',
      input: {
        image: { data: png.toString('base64'), name: 'unicorn-float.png' },
        patent: 'EU0040356240003S',
      },
    });
    const [job] = await world.settle([id]);
    expect(job!.status, JSON.stringify(job!.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(['p010', 'ai67-1', 'ai67-2']);
    const { markdown, result } = await reportOf(world, id);
    expect(markdown.split('\n')[0]).toBe('# Design comparison: unicorn-float.png vs EU0040356240003S');
    expect(markdown).toMatch(/\n## Conclusion\n\n(High|Medium|Low) risk/);
    expect(markdown).toMatch(/\| 1 \| \d+% \| (High|Medium|Low) \| \[view 1\]\(https:/);
    expect(markdown).toContain('unicorn-float.png (PNG, 1 KB, uploaded)');
    expect(result.summary).toMatch(/^(High|Medium|Low) risk vs EU0040356240003S/);
    expect(markdown).not.toContain(bytesSeen);
  });

  it('compares a product image by URL without an upload', async () => {
    const before = lastSeq(world);
    const id = await world.submit({
      workflow: 'design-infringement-1v1',
      input: { image: { url: 'https://example.com/products/float.png' }, patent: 'USD1055174S1' },
    });
    const [job] = await world.settle([id]);
    expect(job!.status, JSON.stringify(job!.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(['ai67-1', 'ai67-2']);
  });

  it('refuses a GIF given as data at the API, naming the field, before any call', async () => {
    const before = lastSeq(world);
    const answer = await world.api('POST', '/jobs', {
      body: {
        workflow: 'design-infringement-1v1',
        input: {
          image: { data: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=', name: 'x.gif' },
          patent: 'USD1055174S1',
        },
      },
    });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toContain('image.data');
    expect(callSequence(world, before)).toEqual([]);
  });
});
