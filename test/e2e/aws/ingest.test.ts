// Bulk ingestion on the aws backend, on the emulators, with the bundled functions: a 540-line
// manifest with the 20 kinds of bad line of the local tests, every job through the bundled step
// workers, uploaded under inbox/, where the bucket's event notification invokes the bundled ingest
// function asynchronously (test/support/inbox-uploads.ts). It reads the manifest (and the files its
// lines name) into a batch, releases the items to the work queue, the bundled step workers run them,
// the sweeper's minute pass wakes it while they run, and the outputs end in the bucket under
// batches/<batchId>/; `opflow --backend aws batch --download` copies them with every report into a
// folder whose links work. A document uploaded on its own joins its folder's batch (a .docx among
// them, read through the extractor files beside the ingest bundle). The same S3 event delivered
// twice, even at once, is read once. Two batches and a job started by hand share
// the tenant's key through the step workers' DynamoDB rate limiter: neither batch starves.
// The manifest's size is what the aws path needs, no more: its 540 records are 12 chunks of the ingest
// function's 49 (several rounds of reading), its 520 jobs 6 BatchGetItem requests of 100 and
// 16 times the default 32 in flight, and two pages (500 and 20) of the items the outputs and the
// download read. 1,000 lines took 79% of this file (1,441 s of its tests' 1,825 s at load 20 to 36
// on the shared two-core machine); the 1,000-line manifests, as JSON Lines and as CSV, run on
// SQLite and on DynamoDB Local and S3 in test/integration/ingest/ingest-core.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Document, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoDbBatchStore, SqsWorkQueue, s3CreatedEvent } from '../../../shared/backends/aws';
import { DynamoDbIngestSchedule } from '../../../shared/backends/aws/dynamodb-ingest-schedule';
import { EnvKeySource } from '../../../shared/backends/local';
import type { EngineDeps } from '../../../shared/engine/deps';
import { isTerminal } from '../../../shared/engine/job-record';
import { redriveBatch } from '../../../shared/ingest/redrive';
import { writeJobReport } from '../../../shared/reports/write-job-report';
import { listAll } from '../../../shared/runtime/job-queries';
import { workflows } from '../../../shared/workflows';
import { type InboxUploads, inboxUploads } from '../../support/inbox-uploads';
import { jsonlManifest, manifestFiles } from '../../support/manifests';
import { unlimitedRate } from '../../support/memory-ports';
import { childEnv, runOpflow } from '../local/opflow-process';
import { AwsWorld, TENANT_KEY } from './harness/aws-world';

describe('bulk ingestion on aws (S3 inbox event → ingest function → step workers)', () => {
  let world: AwsWorld;
  let inbox: InboxUploads;
  let batches: DynamoDbBatchStore;

  beforeAll(async () => {
    world = await AwsWorld.start({ workers: 2, inbox: true });
    inbox = inboxUploads(world);
    batches = inbox.batches;
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });

  const upload = (key: string, body: string | Uint8Array, metadata?: Record<string, string>) =>
    inbox.upload(key, body, metadata);
  const settleBatch = (batchId: string) => inbox.settleBatch(batchId);
  const deliverUntil = (done: () => Promise<boolean>, what: string) => inbox.deliverUntil(done, what);
  const text = async (key: string) =>
    Buffer.from((await world.reports.get(key))?.body ?? new Uint8Array()).toString('utf8');

  it('ingests a 540-line manifest with the 20 kinds of bad line uploaded under inbox/ to 520 jobs, the outputs in the bucket, and a download whose links work', async () => {
    // The 20 bad lines of the local tests (malformed JSON, missing or duplicate ids, refused input,
    // missing, empty or unsupported files...); the files the manifest names are uploaded as
    // manifest files (metadata opflow-role), announced as S3 would: they are not items themselves.
    const lines = 540;
    const good = lines - 20;
    const manifest = jsonlManifest(lines);
    for (const [name, body] of Object.entries(manifestFiles))
      await upload(`inbox/patent-count/sensors/${name}`, body, { 'opflow-role': 'manifest-file' });
    await upload('inbox/patent-count/sensors/disclosures.jsonl', manifest.text);
    const batch = await settleBatch('sensors');
    // Asynchronous invocations only (S3's, its own, the sweeper's), none stopped as a loop, none failed.
    const invoker = world.inbox!.invoker;
    expect(invoker.invocations).toBeGreaterThan(1);
    expect(invoker.stopped).toEqual([]);
    expect(invoker.dead).toEqual([]);
    expect(batch).toMatchObject({
      status: 'FINISHED',
      items: good,
      counts: { records: lines, created: good, invalid: 20 },
    });
    expect(batch.settled).toMatchObject({ succeeded: good, failed: 0 });
    const jobs = await listAll(world.store, { batchId: 'sensors' });
    expect(jobs).toHaveLength(good);
    expect(jobs.every((job) => isTerminal(job.status) && job.source === 'bulk')).toBe(true);
    const summary = (await text('batches/sensors/summary.csv')).trim().split('\n');
    expect(summary).toHaveLength(good + 1);
    expect(summary.slice(1).map((row) => row.split(',')[0])).toEqual(manifest.goodIds);
    const unexpected = summary
      .slice(1)
      .filter(
        (row) => !/^d\d+,v1 \([0-9a-f]{8}\),[^,]+,patent-count,SUCCEEDED,"?[\d,]+ patents for TTL:/.test(row),
      );
    expect(unexpected).toEqual([]);
    expect(summary.find((row) => row.startsWith('d7,'))).toMatch(/patents for TTL:\(file based query\)/);
    const failed = (await text('batches/sensors/failed.jsonl'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(failed).toHaveLength(20);
    expect(failed.map((entry) => entry.source)).toEqual(manifest.bad.map((bad) => `line ${bad.at}`));
    for (const [index, bad] of manifest.bad.entries()) expect(failed[index].reason).toMatch(bad.reason);
    expect(await text('batches/sensors/index.html')).toContain('Batch sensors');

    // The bucket's index links its reports relatively, which one presigned link cannot follow:
    // opflow batch --download copies the outputs and every report into a folder whose links work.
    const folder = mkdtempSync(join(tmpdir(), 'opflow-e2e-aws-download-'));
    try {
      const downloaded = await runOpflow(
        ['--backend', 'aws', 'batch', 'sensors', '--download', 'copy', '--json'],
        { env: childEnv(world.env), cwd: folder },
      );
      expect(downloaded.code, downloaded.stderr).toBe(1); // the batch had bad lines
      const shown = JSON.parse(downloaded.stdout);
      expect(shown.download).toMatchObject({ reports: good, unfinished: 0, missing: [] });
      expect(shown.index).toMatch(/^https?:\/\/.*X-Amz-Signature=/);
      const copy = join(folder, 'copy');
      const index = readFileSync(join(copy, 'index.html'), 'utf8');
      const links = [...index.matchAll(/href="(reports\/[^"]+\/report\.html)"/g)].map((m) => m[1]!);
      expect(links).toHaveLength(good);
      for (const link of links) expect(existsSync(join(copy, link))).toBe(true);
      expect(index).not.toContain('../../reports/');
      const firstJob = jobs.find((job) => job.label === 'Battery 1')!;
      expect(readFileSync(join(copy, 'reports', firstJob.id, 'report.html'), 'utf8')).toMatch(/battery 1\b/i);
      expect(existsSync(join(copy, 'reports', firstJob.id, 'steps'))).toBe(false);
      expect(readFileSync(join(copy, 'failed.jsonl'), 'utf8').trim().split('\n')).toHaveLength(20);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }

    // The same S3 event delivered again, twice at once (S3 and Lambda deliver at least once):
    // nothing new, no second run.
    const head = (await batches.get('sensors'))!;
    const again = s3CreatedEvent(
      { bucket: world.bucket, key: 'inbox/patent-count/sensors/disclosures.jsonl' },
      head.source.revision,
    );
    invoker.enqueue(again);
    invoker.enqueue(again);
    const after = await settleBatch('sensors');
    expect(after.run).toBe(1);
    expect(after.items).toBe(good);
  }, 1_800_000);

  it('--redrive runs only the failed items again, through the ingest function and the step workers', async () => {
    // Tenant "lamps" (its prefix inbox/tenants/lamps/): its key in the secret for the first run; then emptied (no key: the new
    // items fail), then set again for the redrive. A key is cached 300 s (fake clock) by each worker.
    const prefix = world.env.OPFLOW_API_KEY_SECRET_PREFIX!;
    const secrets = world.emulators.secretsManager!;
    const lines = Array.from({ length: 8 }, (_, i) =>
      JSON.stringify({ id: `r${i}`, query: `TTL:(lamp ${i})` }),
    );
    const metadata = { 'opflow-tenant': 'lamps' };
    secrets.setSecret(`${prefix}lamps`, JSON.stringify({ apiKey: TENANT_KEY }));
    await upload(
      'inbox/tenants/lamps/patent-count/lamps/lamps.jsonl',
      `${lines.slice(0, 5).join('\n')}\n`,
      metadata,
    );
    expect((await settleBatch('lamps')).settled).toMatchObject({ succeeded: 5, failed: 0 });
    secrets.setSecret(`${prefix}lamps`, '');
    world.advanceTo(world.now() + 301_000);
    await upload('inbox/tenants/lamps/patent-count/lamps/lamps.jsonl', `${lines.join('\n')}\n`, metadata);
    const failedRun = await settleBatch('lamps');
    expect(failedRun).toMatchObject({ run: 2, items: 8, settled: { succeeded: 5, failed: 3 } });
    const before = await listAll(world.store, { batchId: 'lamps' });
    expect(before.filter((job) => job.status === 'FAILED').map((job) => job.lastError?.message)).toEqual([
      expect.stringMatching(/no API key/),
      expect.stringMatching(/no API key/),
      expect.stringMatching(/no API key/),
    ]);

    // What `opflow --backend aws batch lamps --redrive` does: the failed jobs retried, the batch
    // handed back to the ingest function, which follows them to the end.
    secrets.setSecret(`${prefix}lamps`, JSON.stringify({ apiKey: TENANT_KEY }));
    world.advanceTo(world.now() + 301_000);
    const engine: EngineDeps = {
      store: world.store,
      queue: new SqsWorkQueue({ client: world.emulators.clients.sqs, queueUrl: world.queueUrl }),
      reports: world.reports,
      keys: new EnvKeySource({ env: {} }),
      rateLimiter: unlimitedRate,
      clock: { now: () => Date.now() },
      random: Math.random,
      client: {} as EngineDeps['client'],
      workflows,
      writeReport: writeJobReport,
    };
    const outcome = await redriveBatch({ engine, batches }, 'lamps');
    expect(outcome.retried).toHaveLength(3);
    // The hand-back: due at once in the ingest schedule, taken by the sweeper's next pass.
    await new DynamoDbIngestSchedule(
      world.emulators.clients.documents,
      world.env.OPFLOW_TABLE_NAME!,
    ).scheduleBatch('lamps', world.now(), { restart: true });
    const redriven = await settleBatch('lamps');
    expect(redriven).toMatchObject({ status: 'FINISHED', settled: { succeeded: 8, failed: 0 } });
    const after = await listAll(world.store, { batchId: 'lamps' });
    expect(after).toHaveLength(8);
    for (const job of before) {
      const now = after.find((other) => other.id === job.id)!;
      expect(now.status).toBe('SUCCEEDED');
      // The succeeded ones were not touched; the failed ones ran again as the same jobs.
      if (job.status === 'SUCCEEDED') expect(now.version).toBe(job.version);
      else expect(now.runs).toHaveLength(1);
    }
    expect((await text('batches/lamps/failed.jsonl')).trim()).toBe('');
  }, 300_000);

  it("adds documents uploaded on their own (.md, .docx, .pdf; an .rtf refused) to their folder's batch", async () => {
    await upload('inbox/patent-count/loose/valve.md', '# Valve\n\nTTL:(check valve)\n');
    await upload('inbox/patent-count/loose/notes.rtf', '{\\rtf1}');
    // A .docx: read by mammoth, which the ingest bundle imports from extractors/ beside it.
    const docx = await Packer.toBuffer(
      new Document({ sections: [{ children: [new Paragraph('TTL:(hinge damper)')] }] }),
    );
    await upload('inbox/patent-count/loose/hinge.docx', new Uint8Array(docx));
    // A .pdf in a sub-folder (its id the path under the batch folder): read by unpdf, likewise.
    const pdf = await PDFDocument.create();
    pdf.addPage().drawText('TTL:(heat pump dryer)', {
      x: 50,
      y: 700,
      size: 14,
      font: await pdf.embedFont(StandardFonts.Helvetica),
    });
    await upload('inbox/patent-count/loose/sub/dryer.pdf', await pdf.save());
    const batch = await settleBatch('loose');
    expect(batch.items).toBe(3);
    expect(batch.counts.invalid).toBe(1);
    const summary = await text('batches/loose/summary.csv');
    expect(summary).toMatch(
      /valve\.md,v1 \([0-9a-f]+\),Valve,patent-count,SUCCEEDED,".*patents for TTL:\(check valve\)"/,
    );
    expect(summary).toMatch(/hinge\.docx,v1 \([0-9a-f]+\),.*SUCCEEDED,".*patents for TTL:\(hinge damper\)"/);
    expect(summary).toMatch(
      /sub\/dryer\.pdf,v1 \([0-9a-f]+\),.*SUCCEEDED,".*patents for TTL:\(heat pump dryer\)"/,
    );
    expect(await text('batches/loose/failed.jsonl')).toMatch(/unsupported document type/);
  }, 300_000);
  it('shares the key between two batches and a job started by hand through the DynamoDB rate limiter: neither batch starves, the hand job does not wait for the large batch', async () => {
    // Both batches keep 16 jobs in flight, more together than the key's 20 calls a second: every
    // call of every job takes a token of the tenant's one key from the step workers' limiter
    // (OPFLOW_QPS 20) in DynamoDB Local.
    const inFlight = 16;
    const metadata = { 'opflow-options': JSON.stringify({ inFlight }) };
    const lines = (name: string, count: number) =>
      `${Array.from({ length: count }, (_, i) => JSON.stringify({ id: `${name}${i}`, query: `TTL:(${name} ${i})` })).join('\n')}\n`;
    world.sandbox.ledger.clear();
    await upload('inbox/patent-count/large/large.jsonl', lines('large', 96), metadata);
    await upload('inbox/patent-count/second/second.jsonl', lines('second', 32), metadata);
    // Both read and their first jobs released: then a job is started by hand through the api.
    await deliverUntil(async () => {
      const [large, second] = await Promise.all([batches.get('large'), batches.get('second')]);
      return (large?.admitted ?? 0) > 0 && (second?.admitted ?? 0) > 0;
    }, 'the two batches');
    const terminalAtSubmit = (
      await Promise.all(['large', 'second'].map((batchId) => listAll(world.store, { batchId })))
    )
      .flat()
      .filter((job) => isTerminal(job.status)).length;
    const handId = await world.submit({ workflow: 'patent-count', input: { query: 'TTL:(by hand)' } });
    await deliverUntil(async () => {
      const [large, second, hand] = await Promise.all([
        batches.get('large'),
        batches.get('second'),
        world.store.get(handId),
      ]);
      return (
        large?.status === 'FINISHED' &&
        second?.status === 'FINISHED' &&
        hand !== undefined &&
        isTerminal(hand.status) &&
        world.inbox!.invoker.waiting === 0
      );
    }, 'the two batches and the hand job');

    const large = await listAll(world.store, { batchId: 'large' });
    const second = await listAll(world.store, { batchId: 'second' });
    const hand = (await world.store.get(handId))!;
    expect(large).toHaveLength(96);
    expect(second).toHaveLength(32);
    for (const job of [...large, ...second, hand]) expect(job.status).toBe('SUCCEEDED');
    // The order in which they finished (the clock is the simulated one; ties by id).
    const order = [
      ...large.map((job) => ({ who: 'large', job })),
      ...second.map((job) => ({ who: 'second', job })),
      { who: 'hand', job: hand },
    ]
      .sort((a, b) => a.job.finishedAt! - b.job.finishedAt! || (a.job.id < b.job.id ? -1 : 1))
      .map((entry) => entry.who);

    // The limiter held the key to its rate: no second of simulated time saw more than 20 calls
    // (and the burst of one).
    const calls = world.sandbox.ledger.entries();
    expect(calls).toHaveLength(129);
    expect(new Set(calls.map((call) => call.operationId)).size).toBe(1);
    for (const call of calls)
      expect(
        calls.filter((other) => other.time >= call.time && other.time < call.time + 1_000).length,
      ).toBeLessThanOrEqual(21);
    // The second batch ran beside the large one, not after it: it was done while the large one
    // still had most of its jobs ahead, having had about as many completions as the large one while
    // both ran (each had 16 in flight).
    expect(order.indexOf('second')).toBeLessThan(2 * inFlight);
    const secondDone = order.lastIndexOf('second');
    const largeDone = order.lastIndexOf('large');
    expect(secondDone).toBeLessThan(largeDone);
    const whileBoth = order.slice(0, secondDone + 1);
    expect(whileBoth.filter((who) => who === 'large').length).toBeLessThanOrEqual(
      whileBoth.filter((who) => who === 'second').length + 2 * inFlight,
    );
    expect(order.slice(secondDone + 1).filter((who) => who === 'large').length).toBeGreaterThanOrEqual(32);
    // The hand job waited behind at most the two batches' jobs in flight, not behind the large batch.
    const handAt = order.indexOf('hand');
    expect(handAt).toBeLessThan(largeDone);
    // (Without admission it would wait behind all 128 of them: a few more than 32 for the jobs
    // released while its message waited for its token.)
    expect(handAt - terminalAtSubmit).toBeLessThanOrEqual(2 * inFlight + 8);
  }, 900_000);
});
