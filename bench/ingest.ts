/**
 * `npm run bench:ingest`: a generated 100,000-line JSON Lines manifest (`--lines=N` to change) ingested
 * on the local backend (SQLite) and on the aws backend against the emulators (DynamoDB Local, fauxqs'
 * S3 and SQS), each in a process of its own (bench/ingest-run.ts), reporting lines per second and
 * the ingest process's peak RSS (the guarantee: at most 150 MB however long the manifest).
 * `--only=local` or `--only=aws` runs one. The local side also runs `opflow ingest` waiting for its
 * batch to finish (every item a job on the built-in sandbox) on a `--wait-lines=N` manifest (2,000;
 * 0 leaves it out).
 */
import { execFile } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { startAwsEmulators } from '../scripts/emulators/aws-emulators';

const run = promisify(execFile);
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const lines = Number(arg('lines') ?? 100_000);
const only = arg('only');
/** Lines of the manifest the waiting command runs to the end (every item a job on the built-in sandbox). */
const waitLines = Number(arg('wait-lines') ?? 2_000);

const dir = mkdtempSync(join(tmpdir(), 'opflow-bench-ingest-'));
const manifest = join(dir, 'disclosures.jsonl');
/** `count` lines of some 250 bytes, one in a thousand malformed. */
const writeManifest = (path: string, count: number) =>
  new Promise<void>((resolve, reject) => {
    const out = createWriteStream(path);
    out.on('error', reject);
    for (let i = 1; i <= count; i++) {
      const text = `Disclosure ${i}: ${'a sensor that measures soil moisture with a capacitive probe and sleeps between readings '.repeat(10)}`;
      out.write(
        i % 1000 === 0
          ? `{"id": "d${i}", "query": ""}\n`
          : `${JSON.stringify({ id: `d${i}`, query: `TTL:(sensor ${i})`, title: text.slice(0, 180) })}\n`,
      );
    }
    out.end(resolve);
  });
await writeManifest(manifest, lines);
process.stdout.write(`manifest: ${lines} lines, ${(statSync(manifest).size / 1024 / 1024).toFixed(1)} MB\n`);

const child = async (args: string[], env: NodeJS.ProcessEnv = process.env) => {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'ingest-run.ts'), ...args],
    {
      env,
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(stdout.trim().split('\n').pop() as string) as {
    lines: number;
    items: number;
    invalid: number;
    seconds: number;
    peakRssMb: number;
  };
};
const rows: string[][] = [];
const show = (name: string, r: Awaited<ReturnType<typeof child>>) =>
  rows.push([
    name,
    String(r.lines),
    String(r.items),
    String(r.invalid),
    r.seconds.toFixed(1),
    Math.round(r.lines / r.seconds).toString(),
    r.peakRssMb.toFixed(0),
  ]);

/**
 * The real command, as a user runs it: the built CLI (dist/, no tsx) reading the whole manifest with
 * `opflow ingest --no-wait` (validated, committed chunk by chunk, outputs written); its peak RSS
 * from a preloaded module that reports `process.resourceUsage().maxRSS` at exit.
 */
const cli = async (path = manifest, wait = false) => {
  const work = mkdtempSync(join(dir, 'cli-'));
  const report = join(work, 'rss.json');
  const started = performance.now();
  const { stdout } = await run(
    process.execPath,
    [
      '--require',
      join(import.meta.dirname, 'report-rss.cjs'),
      join(import.meta.dirname, '..', 'bin', 'opflow.js'),
      '--db',
      join(work, 'jobs.db'),
      '--out',
      join(work, 'out'),
      'ingest',
      path,
      '--workflow',
      'patent-count',
      ...(wait ? ['--qps', '1000', '--concurrency', '16'] : ['--no-wait']),
      '--json',
    ],
    {
      // Waiting: the built-in sandbox (in the same process) at 1000x speed runs every item.
      env: { ...process.env, OPFLOW_RSS_REPORT: report, OPFLOW_SANDBOX_SPEED: '1000' },
      maxBuffer: 64 << 20,
    },
  ).catch((error: { stdout?: string; code?: number }) => {
    // Exit code 1: the manifest has bad lines on purpose.
    if (error.code === 1 && error.stdout) return { stdout: error.stdout };
    throw error;
  });
  const seconds = (performance.now() - started) / 1000;
  const out = JSON.parse(stdout) as {
    batch: { thisRun: { records: number; created: number; invalid: number } };
  };
  const { readFileSync } = await import('node:fs');
  const { peakRssMb } = JSON.parse(readFileSync(report, 'utf8')) as { peakRssMb: number };
  return {
    lines: out.batch.thisRun.records,
    items: out.batch.thisRun.created,
    invalid: out.batch.thisRun.invalid,
    seconds,
    peakRssMb,
  };
};

try {
  if (only !== 'aws') {
    show('local: opflow ingest --no-wait (built CLI)', await cli());
    show('local: ingest + admission', await child(['local', manifest, dir]));
    if (waitLines > 0) {
      // The command as most people run it: it waits, running every item to the end.
      const small = join(dir, 'waiting.jsonl');
      await writeManifest(small, waitLines);
      show('local: opflow ingest, waiting (built CLI)', await cli(small, true));
    }
  }
  if (only !== 'local') {
    const emulators = await startAwsEmulators({ secretsManager: false });
    try {
      const table = await emulators.createTable();
      const bucket = emulators.createBucket();
      const { queueUrl } = emulators.createQueue();
      const { createReadStream } = await import('node:fs');
      await emulators.clients.s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: 'inbox/patent-count/bench/disclosures.jsonl',
          Body: createReadStream(manifest),
          ContentLength: statSync(manifest).size,
        }),
      );
      const endpoints = emulators.clientConfig.endpoints ?? {};
      show(
        'aws (DynamoDB Local, S3)',
        await child(['aws', bucket, 'inbox/patent-count/bench/disclosures.jsonl', table, queueUrl], {
          ...process.env,
          AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
          AWS_ENDPOINT_URL_S3: endpoints.s3,
          AWS_ENDPOINT_URL_SQS: endpoints.sqs,
        }),
      );
    } finally {
      await emulators.stop();
    }
  }
  const header = ['backend', 'lines', 'items', 'bad lines', 'seconds', 'lines/s', 'peak RSS (MB)'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows])
    process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')}\n`);
  process.stdout.write('budget: peak RSS at most 150 MB\n');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
