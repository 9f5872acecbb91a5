// The deliverables of a batch on the aws backend, fetched as a user would and read by readers other
// than the libraries that wrote them: a manifest of two novelty checks and an FTO search uploaded
// under inbox/ (the bucket's notification invokes the bundled ingest function; the bundled step
// workers run the jobs against the sandbox with the tenant's key), then
// - the batch workbook (summary.xlsx, exceljs) through the job API's `GET /batches/{id}/outputs/summary.xlsx`
//   and in the folder `opflow --backend aws batch --download` fills, read by SheetJS;
// - each job's report.docx (the `docx` package) through `GET /jobs/{id}/report`'s presigned link,
//   `opflow --backend aws report <id> --json`'s link and the download folder, read by mammoth and
//   checked against the job's result.json: the novelty checks' features × references table and the
//   FTO search's patents and claim charts, cell by cell;
// - a finished batch's outputs following its jobs after the job API retried a failed item and then
//   cancelled it while its message still waited on the queue (no step ever ran it): the api wakes
//   the batch, and the ingest function counts the cancel and rewrites summary.csv and index.html.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../../../shared/engine/batch-store';
import type { Job } from '../../../shared/engine/job-record';
import { listAll } from '../../../shared/runtime/job-queries';
import { workflows } from '../../../shared/workflows';
import {
  expectFtoWordReport,
  expectNoveltyWordReport,
  readWorkbook,
  type Workbook,
} from '../../support/deliverable-readers';
import { freshFetch, noKeepAlive } from '../../support/fresh-fetch';
import { type InboxUploads, inboxUploads } from '../../support/inbox-uploads';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { childEnv, repoRoot, runOpflow } from '../local/opflow-process';
import { AwsWorld } from './harness/aws-world';

const wordType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const sheetType = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

let world: AwsWorld;
let inbox: InboxUploads;
let dir: string;
beforeAll(async () => {
  world = await AwsWorld.start({ workers: 2, inbox: true });
  inbox = inboxUploads(world);
  dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-aws-deliverables-'));
}, 600_000);
afterAll(async () => {
  await world?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const example = (name: string) => readFileSync(join(repoRoot, 'examples', 'disclosures', name), 'utf8');

/** What a presigned link serves: its bytes and content type. */
async function fetched(url: string): Promise<{ bytes: Buffer; type: string }> {
  expect(url).toMatch(/X-Amz-Signature=/);
  const got = await request(url, { dispatcher: noKeepAlive });
  expect(got.statusCode, url).toBe(200);
  return { bytes: Buffer.from(await got.body.arrayBuffer()), type: String(got.headers['content-type']) };
}

/**
 * The workbook's reading every copy must give: a Summary row per item in manifest order, each
 * succeeded with a verdict, its X/Y/A counts those of its detail rows, the upstream the key's; no
 * formula and no cell starting one.
 */
function expectBatchWorkbook(workbook: Workbook, jobs: Job[]) {
  expect(workbook.book.SheetNames).toEqual([
    'Summary',
    'novelty-check detail',
    'fto detail',
    'Problems',
    'About',
  ]);
  const summary = workbook.rows('Summary');
  expect(summary.map((row) => row.Id)).toEqual(['IDF-1', 'IDF-2', 'FTO-1']);
  expect(summary.map((row) => row.Workflow)).toEqual(['novelty-check', 'novelty-check', 'fto']);
  const novelty = workbook.rows('novelty-check detail');
  const fto = workbook.rows('fto detail');
  for (const row of summary) {
    expect(row.Status, String(row.Error)).toBe('SUCCEEDED');
    expect(String(row.Verdict).length).toBeGreaterThan(10);
    expect(row.Upstream).toMatch(/^http:\/\/127\.0\.0\.1:\d+ key [0-9a-f]{8}$/);
    expect(jobs.find((job) => job.id === row['Job id'])?.label).toBeDefined();
    const own = (row.Workflow === 'fto' ? fto : novelty).filter((line) => line.Id === row.Id);
    expect(own.length, String(row.Id)).toBeGreaterThan(0);
    expect(own.length).toBe(row.References);
  }
  for (const row of summary.filter((line) => line.Workflow === 'novelty-check')) {
    const own = novelty.filter((line) => line.Id === row.Id);
    for (const category of ['X', 'Y', 'A'] as const)
      expect(own.filter((line) => line.Category === category).length, `${row.Id} ${category}`).toBe(
        row[category],
      );
  }
  expect(workbook.rows('Problems')).toEqual([]);
  for (const name of workbook.book.SheetNames)
    for (const [address, cell] of Object.entries(
      workbook.book.Sheets[name] as Record<string, { f?: string; v?: unknown }>,
    )) {
      if (address.startsWith('!')) continue;
      expect(cell.f, `${name}!${address}`).toBeUndefined();
      if (typeof cell.v === 'string')
        expect(/^[=+\-@\t\r]/.test(cell.v), `${name}!${address}: ${cell.v}`).toBe(false);
    }
}

describe('deliverables on aws: the batch workbook and the Word reports, from S3', {
  timeout: REAL_PROCESS_TIMEOUT_MS * 3,
}, () => {
  it('serves the workbook and each job’s report.docx through the API, opflow report and opflow batch --download, each read by another reader', async () => {
    const fto = workflows.get('fto')?.example as Record<string, unknown>;
    const lines = [
      { id: 'IDF-1', text: example('hot-swap-battery-inspection-drone.md') },
      { id: 'IDF-2', text: example('self-cleaning-solar-panel-coating.md') },
      { id: 'FTO-1', workflow: 'fto', ...fto },
    ];
    await inbox.upload(
      'inbox/novelty-check/idf/idf.jsonl',
      `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`,
    );
    const batch = await inbox.settleBatch('idf');
    expect(batch).toMatchObject({ status: 'FINISHED', items: 3, settled: { succeeded: 3, failed: 0 } });
    const jobs = await listAll(world.store, { batchId: 'idf' });
    expect(jobs.map((job) => job.workflow).sort()).toEqual(['fto', 'novelty-check', 'novelty-check']);
    const stored = await world.reports.get('batches/idf/summary.xlsx');
    expect(stored?.contentType).toBe(sheetType);

    // The job API's route (the api function through the gateway): the bytes kept in S3.
    const answer = await freshFetch(`${world.gateway.url}/batches/idf/outputs/summary.xlsx`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe(sheetType);
    expect(answer.headers.get('content-disposition')).toBe('attachment; filename="summary.xlsx"');
    const served = Buffer.from(await answer.arrayBuffer());
    expect(served.equals(Buffer.from(stored!.body))).toBe(true);
    expectBatchWorkbook(readWorkbook(served), jobs);

    // Each job's Word report through the API's presigned link, checked against its result.json.
    const docx = new Map<string, Buffer>();
    for (const job of jobs) {
      const links = await world.api('GET', `/jobs/${job.id}/report`);
      expect(links.status).toBe(200);
      const files = links.body.files as { name: string; url: string }[];
      const link = (name: string) => files.find((file) => file.name === name)?.url as string;
      const word = await fetched(link('report.docx'));
      expect(word.type).toBe(wordType);
      const result = JSON.parse((await fetched(link('result.json'))).bytes.toString('utf8'));
      expect(result.job).toMatchObject({ id: job.id, upstream: { kind: 'platform' } });
      if (job.workflow === 'fto') await expectFtoWordReport(word.bytes, result);
      else await expectNoveltyWordReport(word.bytes, result);
      docx.set(job.id, word.bytes);
    }

    // The real bin: `opflow --backend aws report <id> --json` links the same Word file.
    const env = childEnv(world.env);
    const first = jobs.find((job) => job.workflow === 'fto') as Job;
    const report = await runOpflow(['--backend', 'aws', 'report', first.id, '--json'], { env, cwd: dir });
    expect(report.code, report.stderr).toBe(0);
    const linked = await fetched(JSON.parse(report.stdout).docx);
    expect(linked.bytes.equals(docx.get(first.id) as Buffer)).toBe(true);

    // `opflow --backend aws batch --download`: the workbook, relinked to the folder, and every Word report.
    const download = await runOpflow(['--backend', 'aws', 'batch', 'idf', '--download', 'copy', '--json'], {
      env,
      cwd: dir,
    });
    expect(download.code, download.stderr).toBe(0);
    expect(JSON.parse(download.stdout).download).toMatchObject({ reports: 3, unfinished: 0, missing: [] });
    const copy = join(dir, 'copy');
    const copied = readWorkbook(readFileSync(join(copy, 'summary.xlsx')));
    expectBatchWorkbook(copied, jobs);
    const targets = Object.values(copied.book.Sheets.Summary as Record<string, { l?: { Target: string } }>)
      .map((cell) => cell.l?.Target)
      .filter((target): target is string => target !== undefined);
    expect(targets).toHaveLength(3);
    for (const job of jobs) {
      const target = targets.find((candidate) => candidate.includes(job.id));
      expect(target, job.id).toMatch(/^reports\/[^/]+\/report\.html$/);
      const folder = join(copy, (target as string).replace(/report\.html$/, ''));
      expect(readFileSync(join(folder, 'report.docx')).equals(docx.get(job.id) as Buffer)).toBe(true);
      const result = JSON.parse(readFileSync(join(folder, 'result.json'), 'utf8'));
      if (job.workflow === 'fto')
        await expectFtoWordReport(readFileSync(join(folder, 'report.docx')), result);
      else await expectNoveltyWordReport(readFileSync(join(folder, 'report.docx')), result);
    }
  });

  it('rewrites a finished batch’s summary.csv, index.html and totals when the API cancels a retried item still queued', async () => {
    // The second count has a deadline it cannot meet: the batch finishes with it FAILED.
    await inbox.upload(
      'inbox/patent-count/redo/redo.jsonl',
      `${JSON.stringify({ id: 'ok', query: 'TTL:(redo lamp)' })}\n${JSON.stringify({ id: 'late', query: 'TTL:(redo hinge)', deadline: '1ms' })}\n`,
    );
    const first = await inbox.settleBatch('redo');
    expect(first).toMatchObject({ status: 'FINISHED', settled: { succeeded: 1, failed: 1, cancelled: 0 } });
    const text = async (name: string) =>
      Buffer.from((await world.reports.get(`batches/redo/${name}`))?.body ?? new Uint8Array()).toString(
        'utf8',
      );
    const rowOf = async (id: string) =>
      (await text('summary.csv')).split('\n').find((line) => line.startsWith(`${id},`)) ?? '';
    expect(await rowOf('late')).toMatch(/,patent-count,FAILED,/);
    expect(await text('index.html')).toContain('<span class="s FAILED">FAILED</span>');
    const late = (await listAll(world.store, { batchId: 'redo' })).find((job) => job.status === 'FAILED')!;

    // Retried through the job API (it rejoins the batch), then cancelled before any worker took it.
    const retried = await world.api('POST', `/jobs/${late.id}/retry`, { body: { deadlineMs: 600_000 } });
    expect(retried.status).toBe(200);
    expect((await inbox.batches.get('redo'))?.inFlight).toEqual([late.id]);
    const cancelled = await world.api('POST', `/jobs/${late.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect((cancelled.body.job as { status: string }).status).toBe('CANCELLED');
    // The api woke the batch: the ingest function's invocation is on its way before anything runs.
    expect(world.inbox!.invoker.waiting).toBeGreaterThan(0);

    // The queued message finds the job cancelled (no step, no end of the worker's); the ingest
    // function counts the cancel, the batch finishes again and its files are rewritten.
    let again: Batch | undefined;
    await inbox.deliverUntil(
      async () => {
        const batch = await inbox.batches.get('redo');
        again = batch?.inFlight.length === 0 && world.inbox!.invoker.waiting === 0 ? batch : undefined;
        return again !== undefined && again.outputsOfFinish === again.finishedAt;
      },
      'the cancelled item counted',
      500,
    );
    expect(again).toMatchObject({
      status: 'FINISHED',
      inFlight: [],
      settled: { succeeded: 1, failed: 0, cancelled: 1 },
    });
    expect(again!.finishedAt).toBeGreaterThanOrEqual(first.finishedAt!);
    expect(await rowOf('late')).toMatch(/,patent-count,CANCELLED,/);
    const page = await text('index.html');
    expect(page).toContain('<span class="s CANCELLED">CANCELLED</span>');
    expect(page).not.toContain('<span class="s FAILED">FAILED</span>');
    // The job API's view of the batch says the same.
    const view = await world.api('GET', '/batches/redo');
    expect(view.status).toBe(200);
    expect(JSON.stringify(view.body)).toContain('"cancelled":1');
    expect(world.inbox!.invoker.dead).toEqual([]);
  });
});
