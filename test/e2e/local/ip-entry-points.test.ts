/**
 * The design infringement workflows and FTO through every entry point but `opflow run` (which
 * design-workflows-run.test.ts and the fto tests cover), each the real thing against the built-in
 * sandbox: one `opflow serve --mcp` (bearer token, webhook secrets, a config of schedules and webhook
 * mappings) takes POST /jobs, signed webhook deliveries and MCP's submit_job, with images as data
 * URLs and as URLs; `opflow schedules trigger` starts each schedule's job; `opflow ingest` takes a
 * manifest whose lines give `images` (and an FTO line) and a folder of image files. Every job ends
 * SUCCEEDED with its report, from the source it came by, and the images' bytes appear in no answer.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type EntryPoints,
  type StartedJob,
  sourceOfEntry,
  startEntryPoints,
} from '../../support/entry-points';
import { killRunningOpflows, type OpflowProcess, runOpflow } from './opflow-process';

/** A real PNG (48x48), as a product photo would be sent. */
const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAADAAAAAwCAAAAAByaaZbAAAAq0lEQVR42u2WSw6AMAhE5/6XxpgaU8oMLS4aF2WlhIf8SoUVBQd4tU1WgWYsEFD78JQBvRUhoOKHyAPK3gQBlq9+H4DHs9PY6CKkOwJD6gjlIVVyqlhC0oeOACk56XTnxEWrZykAYtRIwOwDnHAAFgB4YH5y9gJYArAT+GGV6p0uz1J9Wm0KJCfO0vVpKwQ70xnBt4Ym1F4yozdCsvkYku/WD9s7XBDnT+CWC0dz1oyW+a8bAAAAAElFTkSuQmCC',
  'base64',
);
const dataUrl = `data:image/png;base64,${png.toString('base64')}`;
const latch =
  'A drone battery latch with a spring-loaded pawl that engages a notch in the battery housing. A release lever disengages the pawl with one hand.';
const design = 'EU0040356240003S';
const token = 'ip-entry-points-token-0123456789abcdef';
const secret = `whsec_${Buffer.from('ip-entry-points-webhook-secret-32b').toString('base64')}`;

const config = {
  schedules: [
    {
      name: 'ring-watch',
      cron: '0 6 * * 1',
      workflow: 'design-infringement-search',
      input: { images: [{ url: 'https://example.com/products/ring.png' }], countries: ['US', 'EU'] },
    },
    {
      name: 'float-check',
      cron: '0 6 * * 2',
      workflow: 'design-infringement-1v1',
      input: { image: { data: dataUrl, name: 'float.png' }, patent: design },
    },
    {
      name: 'latch-fto',
      cron: '0 6 * * 3',
      workflow: 'fto',
      input: { text: latch, markets: ['US', 'EP'] },
    },
  ],
  webhooks: {
    catalogue: {
      workflow: 'design-infringement-search',
      input: {
        images: [{ data: { $from: '/product/photo' }, name: { $from: '/product/file' } }],
        countries: ['US', 'CN'],
      },
      label: { $from: '/product/sku' },
    },
    lookalike: {
      workflow: 'design-infringement-1v1',
      input: { image: { url: { $from: '/photo' } }, patent: { $from: '/design' } },
    },
    launches: {
      workflow: 'fto',
      input: { text: { $from: '/description' }, markets: { $from: '/markets' } },
    },
  },
};

describe('design workflows and FTO through every entry point (built-in sandbox)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let serve: OpflowProcess;
  /** Every answer body, to look for the images' bytes in. */
  const answers: string[] = [];
  const started: StartedJob[] = [];
  let entry: EntryPoints;
  const api: EntryPoints['api'] = (...args) => entry.api(...args);

  beforeAll(async () => {
    entry = await startEntryPoints({ prefix: 'opflow-e2e-ip-entry-', config, token, secret, answers });
    ({ dir, env, serve } = entry);
  }, 120_000);

  afterAll(() => {
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the job API (POST /jobs) takes images as data URLs and URLs', async () => {
    for (const [workflow, input] of [
      [
        'design-infringement-search',
        { images: [{ data: dataUrl, name: 'front.png' }, { url: 'https://example.com/products/side.jpg' }] },
      ],
      ['design-infringement-1v1', { image: { data: dataUrl, name: 'float.png' }, patent: design }],
      ['fto', { text: latch, markets: ['US'], comparePatents: ['CN118289111A'] }],
    ] as const) {
      const answer = await api('POST', '/jobs', { workflow, input });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      started.push({ via: 'api', workflow, id: answer.body.job.id });
    }
    // A bad image is refused at the door, naming the field.
    const refused = await api('POST', '/jobs', {
      workflow: 'design-infringement-1v1',
      input: { image: { data: 'data:image/png;base64,R0lGODlhAQABAAAAACw=', name: 'x.png' }, patent: design },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('image.data');
  }, 60_000);

  it('signed webhook deliveries become jobs through their mappings', async () => {
    const deliveries: [string, string, unknown][] = [
      [
        'catalogue',
        'design-infringement-search',
        { product: { sku: 'RING-7', file: 'ring.png', photo: dataUrl } },
      ],
      ['lookalike', 'design-infringement-1v1', { photo: 'https://example.com/products/float.png', design }],
      ['launches', 'fto', { description: latch, markets: ['US', 'CN'] }],
    ];
    for (const [index, [source, workflow, payload]] of deliveries.entries()) {
      const answer = await entry.deliver(source, `msg_ip_${index}`, payload);
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      started.push({ via: 'webhook', workflow, id: answer.body.jobId });
    }
  }, 60_000);

  it('MCP submit_job starts them too (Streamable HTTP with the token)', async () => {
    await entry.withMcp(async (client) => {
      for (const [workflow, input] of [
        ['design-infringement-search', { images: [{ data: dataUrl, name: 'mcp.png' }], field: 'swim ring' }],
        ['design-infringement-1v1', { image: { url: 'https://example.com/p/mcp.png' }, patent: design }],
        ['fto', { text: latch, markets: ['EP'] }],
      ] as const) {
        const answer = await entry.submitJob(client, workflow, input);
        expect(answer.isError, answer.text).toBe(false);
        started.push({ via: 'mcp', workflow, id: answer.jobId });
      }
    });
  }, 60_000);

  it('opflow schedules trigger starts each schedule’s job, which opflow serve runs', async () => {
    const listed = await runOpflow(['schedules', '--json'], { env, cwd: dir });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('ring-watch');
    for (const { name, workflow } of config.schedules) {
      const run = await runOpflow(['schedules', 'trigger', name, '--json'], { env, cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      answers.push(run.stdout);
      started.push({ via: 'schedule', workflow, id: JSON.parse(run.stdout).jobId });
    }
  }, 60_000);

  it('every job so started ends SUCCEEDED with its report, by its source', async () => {
    const { done, pending } = await entry.settle(started, 150_000);
    expect(pending).toEqual([]);
    expect(
      done.map((job) => `${job.workflow} ${job.status} ${job.lastError?.message ?? ''}`.trim()).sort(),
    ).toEqual(started.map((job) => `${job.workflow} SUCCEEDED`).sort());
    for (const { via, id, workflow } of started) {
      const job = done.find((item) => item.id === id)!;
      expect(job.source, `${via} ${workflow}`).toBe(sourceOfEntry[via]);
      const report = readFileSync(join(dir, 'out', id, 'report.md'), 'utf8');
      expect(report.split('\n')[0], `${via} ${workflow}`).toMatch(
        /^# (Design infringement search|Design comparison|FTO search): /,
      );
    }
    const catalogue = done.find(
      (job) => job.workflow === 'design-infringement-search' && job.source === 'webhook',
    );
    expect(catalogue?.label).toBe('RING-7');
    // The images' bytes never come back in an answer.
    for (const text of answers) expect(text).not.toContain(png.toString('base64').slice(0, 60));
    expect(serve.stderrSoFar()).not.toContain(png.toString('base64').slice(0, 60));
  }, 180_000);

  it('opflow ingest takes a manifest whose lines give images (and an FTO line), and a folder of image files', async () => {
    const manifest = join(dir, 'products.jsonl');
    writeFileSync(
      manifest,
      [
        { id: 'ring-url', images: [{ url: 'https://example.com/products/ring.png' }], countries: ['US'] },
        { id: 'ring-data', images: [{ data: dataUrl, name: 'ring-side.png' }] },
        {
          id: 'float-1v1',
          workflow: 'design-infringement-1v1',
          image: { data: dataUrl, name: 'float.png' },
          patent: design,
        },
        { id: 'latch-fto', workflow: 'fto', text: latch, markets: ['US'] },
        { id: 'gif', images: [{ data: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=', name: 'logo.gif' }] },
      ]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    const fromManifest = await runOpflow(
      ['ingest', manifest, '--workflow', 'design-infringement-search', '--json'],
      { env, cwd: dir },
    );
    const manifestAnswer = JSON.parse(fromManifest.stdout);
    expect(manifestAnswer.batch.totals, fromManifest.stderr).toMatchObject({ succeeded: 4, failed: 0 });
    expect(manifestAnswer.problems).toMatchObject([{ position: 'line 5', id: 'gif' }]);
    expect(manifestAnswer.problems[0].reason).toContain(
      'images[0].data: image (logo.gif): not a PNG or JPEG image',
    );

    mkdirSync(join(dir, 'photos', 'summer'), { recursive: true });
    writeFileSync(join(dir, 'photos', 'front.png'), png);
    writeFileSync(join(dir, 'photos', 'summer', 'float.jpg.png'), png);
    writeFileSync(
      join(dir, 'photos', 'logo.png'),
      Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00', 'latin1'),
    );
    const fromFolder = await runOpflow(
      ['ingest', join(dir, 'photos'), '--workflow', 'design-infringement-search', '--json'],
      { env, cwd: dir },
    );
    const folderAnswer = JSON.parse(fromFolder.stdout);
    expect(folderAnswer.batch.totals, fromFolder.stderr).toMatchObject({ succeeded: 2, failed: 0 });
    expect(folderAnswer.problems).toMatchObject([{ id: 'logo.png' }]);
    expect(folderAnswer.problems[0].reason).toContain('by its first bytes it is a GIF image');
    const results = readFileSync(join(dir, 'out', 'batches', folderAnswer.batch.id, 'results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; status: string; job_id: string });
    expect(results.map((row) => [row.id, row.status]).sort()).toEqual([
      ['front.png', 'SUCCEEDED'],
      ['summer/float.jpg.png', 'SUCCEEDED'],
    ]);
    for (const row of results) {
      const report = readFileSync(join(dir, 'out', row.job_id, 'report.md'), 'utf8');
      expect(report).toMatch(/\((PNG), 1 KB, uploaded\)/);
      expect(report).not.toContain(png.toString('base64').slice(0, 60));
    }
  }, 180_000);
});
