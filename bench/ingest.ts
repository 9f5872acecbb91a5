/**
 * `npm run bench:ingest`: a generated 100,000-line JSON Lines manifest (`--lines=N` to change) ingested
 * on the local backend (SQLite) and on the aws backend against the emulators (DynamoDB Local, fauxqs'
 * S3 and SQS), each in a process of its own (bench/ingest-run.ts), reporting lines per second and
 * the ingest process's peak RSS (the guarantee: at most 150 MB however long the manifest).
 * `--only=local` or `--only=aws` runs one. The local side also runs `opflow ingest` waiting for its
 * batch to finish (every item a job on the built-in sandbox) on a `--wait-lines=N` manifest (2,000;
 * 0 leaves it out). On aws the process measured is the ingest function itself: its bundle (built as
 * the CDK app builds it) in a plain Node process of its own (bench/ingest-lambda.mjs, one warm
 * instance), handed the S3 event and then its own hand-overs (asynchronous invocations of itself,
 * taken by a local Lambda Invoke endpoint) by this process, as Lambda's asynchronous invoke does;
 * `--function-timeout=S` (default 900, the function's) is the time each invocation is given. `--aws-core` adds the older row: the ingestion core through tsx.
 */
import { execFile, fork } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Upload } from '@aws-sdk/lib-storage';
import { type AwsEmulators, startAwsEmulators } from '../scripts/emulators/aws-emulators';
import { AsyncInvoker } from '../scripts/lambda/async-invoke';
import { bundleFunctions } from '../scripts/lambda/bundle-functions';
import { startLambdaEndpoint } from '../scripts/lambda/lambda-endpoint';
import { DynamoDbBatchStore, s3CreatedEvent } from '../shared/backends/aws';

const run = promisify(execFile);
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const lines = Number(arg('lines') ?? 100_000);
const only = arg('only');
/** Lines of the manifest the waiting command runs to the end (every item a job on the built-in sandbox). */
const waitLines = Number(arg('wait-lines') ?? 2_000);
const functionTimeoutMs = Number(arg('function-timeout') ?? 900) * 1000;
const awsCore = process.argv.includes('--aws-core');

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

/**
 * The bundled ingest function on the emulators, as deployed: the manifest uploaded under inbox/, its
 * S3 event handed to one warm instance, then every hand-over of the function to itself (an
 * asynchronous invoke, to a local Invoke endpoint), until the batch's source is read to its end.
 */
const lambda = async (emulators: AwsEmulators, table: string, bucket: string, key: string) => {
  const bundles = await bundleFunctions();
  const work = emulators.createQueue();
  const endpoints = emulators.clientConfig.endpoints ?? {};
  type Reply =
    | { kind: 'ready'; loadedRssMb: number }
    | { kind: 'answer'; answer?: unknown; error?: string; rssMb: number }
    | { kind: 'exit'; peakRssMb: number; loadedRssMb: number };
  const replies: Reply[] = [];
  let waiting: ((reply: Reply) => void) | undefined;
  let instance: ReturnType<typeof fork> | undefined;
  const next = () =>
    new Promise<Reply>((resolve, reject) => {
      const queued = replies.shift();
      if (queued) return resolve(queued);
      // One exit listener per wait, removed with its answer (63 hand-overs added 63 before).
      const exited = (code: number | null) => reject(new Error(`the ingest instance exited (${code})`));
      instance?.once('exit', exited);
      waiting = (reply) => {
        instance?.off('exit', exited);
        resolve(reply);
      };
    });
  // Each invocation goes to the one warm instance, one at a time.
  const invoker = new AsyncInvoker(
    async (event) => {
      instance?.send({ kind: 'invoke', event, timeoutMs: functionTimeoutMs });
      const reply = await next();
      if (reply.kind !== 'answer') throw new Error(`unexpected ${reply.kind} from the ingest instance`);
      if (reply.error) throw new Error(`the ingest function threw: ${reply.error}`);
    },
    {
      functionName: 'opflow-bench-ingest',
      timeoutMs: functionTimeoutMs,
      recursiveLoop: 'Allow',
      retryAttempts: 0,
      maxEventAgeSeconds: 21_600,
    },
  );
  const invokeEndpoint = await startLambdaEndpoint(new Map([['opflow-bench-ingest', invoker]]));
  instance = fork(join(import.meta.dirname, 'ingest-lambda.mjs'), [bundles.files.ingest], {
    execArgv: [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      PATH: process.env.PATH,
      OPFLOW_TABLE_NAME: table,
      OPFLOW_QUEUE_URL: work.queueUrl,
      OPFLOW_BUCKET_NAME: bucket,
      OPFLOW_API_KEY_SECRET_PREFIX: 'opflow/bench/api-key/',
      AWS_REGION: emulators.region,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      AWS_ENDPOINT_URL_S3: endpoints.s3,
      AWS_ENDPOINT_URL_LAMBDA: invokeEndpoint.url,
      POWERTOOLS_SERVICE_NAME: 'opflow',
      POWERTOOLS_METRICS_NAMESPACE: 'opflow',
      POWERTOOLS_LOG_LEVEL: 'WARN',
      AWS_LAMBDA_FUNCTION_NAME: 'opflow-bench-ingest',
    },
  });
  instance.on('message', (reply: Reply) => {
    if (waiting) {
      const resolve = waiting;
      waiting = undefined;
      resolve(reply);
    } else replies.push(reply);
  });
  try {
    await next(); // loaded
    const batches = new DynamoDbBatchStore({ client: emulators.clients.documents, tableName: table });
    const started = performance.now();
    invoker.enqueue(s3CreatedEvent({ bucket, key }));
    for (let idle = 0; idle < 120; ) {
      if ((await invoker.runDue()) === 0) {
        idle += 1;
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      idle = 0;
      if (invoker.failures > 0)
        throw new Error(`the ingest function failed: ${JSON.stringify(invoker.dead)}`);
      // inbox/<workflow>/<batch>/<manifest>: the batch is named after its folder.
      const batch = await batches.get(key.split('/')[2] ?? '');
      if (batch?.cursor.done) {
        const seconds = (performance.now() - started) / 1000;
        instance.send({ kind: 'exit' });
        const exit = await next();
        if (exit.kind !== 'exit') throw new Error(`unexpected ${exit.kind} from the ingest instance`);
        process.stdout.write(
          `aws: ${invoker.invocations} invocation(s) of the ingest function; its RSS once the bundle was loaded ${exit.loadedRssMb.toFixed(0)} MB\n`,
        );
        return {
          lines: batch.counts.records,
          items: batch.counts.created,
          invalid: batch.counts.invalid,
          seconds,
          peakRssMb: exit.peakRssMb,
        };
      }
    }
    throw new Error('the ingest function stopped handing over before the manifest was read');
  } finally {
    instance.kill();
    await invokeEndpoint.close();
    await bundles.remove();
  }
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
      // In parts, as a user's upload of a large manifest is (one PutObject of a 100,000-line
      // manifest, 22.5 MB, passes the S3 emulator's 11 MiB body limit).
      await new Upload({
        client: emulators.clients.s3,
        params: {
          Bucket: bucket,
          Key: 'inbox/patent-count/bench/disclosures.jsonl',
          Body: createReadStream(manifest),
        },
        partSize: 5 * 1024 * 1024,
        queueSize: 2,
      }).done();
      show(
        'aws: the ingest function (bundle, plain Node)',
        await lambda(emulators, table, bucket, 'inbox/patent-count/bench/disclosures.jsonl'),
      );
      if (awsCore) {
        const endpoints = emulators.clientConfig.endpoints ?? {};
        const coreTable = await emulators.createTable();
        show(
          'aws: ingest + admission through tsx',
          await child(['aws', bucket, 'inbox/patent-count/bench/disclosures.jsonl', coreTable, queueUrl], {
            ...process.env,
            AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
            AWS_ENDPOINT_URL_S3: endpoints.s3,
            AWS_ENDPOINT_URL_SQS: endpoints.sqs,
          }),
        );
      }
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
