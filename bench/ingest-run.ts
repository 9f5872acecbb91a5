/**
 * One ingestion in this process, for bench/ingest.ts to measure from outside: reads the manifest
 * (a local file, or an S3 object on the emulators) the way `opflow ingest` and the ingest function
 * do, chunk by chunk, releasing items as it goes (admission up to 32 in flight; nothing runs them),
 * then prints one JSON line: lines, items, seconds, and this process's peak RSS.
 *
 *   tsx bench/ingest-run.ts local <manifest> <dir>
 *   tsx bench/ingest-run.ts aws <bucket> <key> <table> <queueUrl>   (endpoints from AWS_ENDPOINT_URL_*)
 */
import { join } from 'node:path';
import {
  createAwsClients,
  DynamoDbBatchStore,
  DynamoDbJobStore,
  openS3Object,
  readS3Object,
  S3ReportStore,
  SqsWorkQueue,
} from '../shared/backends/aws';
import { createLocalBackend, EnvKeySource } from '../shared/backends/local';
import type { EngineDeps } from '../shared/engine/deps';
import { admitBatch } from '../shared/ingest/admission';
import { type IngestDeps, type IngestSource, ingest, openBatch } from '../shared/ingest/ingest';
import { localIngestSource } from '../shared/ingest/local-source';
import { writeJobReport } from '../shared/reports/write-job-report';
import { workflows } from '../shared/workflows';

const [backend, ...args] = process.argv.slice(2);
const noClient = new Proxy(
  {},
  {
    get: () => async () => {
      throw new Error('no upstream calls here');
    },
  },
);
const engine = (parts: Pick<EngineDeps, 'store' | 'queue' | 'reports'>): EngineDeps => ({
  ...parts,
  keys: new EnvKeySource({ env: {} }),
  rateLimiter: {
    take: async () => ({ granted: true }),
    throttled: async () => {},
    succeeded: async () => {},
  },
  clock: { now: () => Date.now() },
  random: Math.random,
  client: noClient as EngineDeps['client'],
  workflows,
  writeReport: writeJobReport,
});

let deps: IngestDeps;
let source: IngestSource;
if (backend === 'local') {
  const [manifest, dir] = args as [string, string];
  const local = createLocalBackend({ dbPath: join(dir, 'jobs.db'), outDir: join(dir, 'out') });
  deps = { engine: engine(local), batches: local.batches };
  source = localIngestSource({ kind: 'jsonl', uri: manifest });
} else {
  const [bucket, key, table, queueUrl] = args as [string, string, string, string];
  const clients = createAwsClients({
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    endpoints: {
      dynamodb: process.env.AWS_ENDPOINT_URL_DYNAMODB,
      s3: process.env.AWS_ENDPOINT_URL_S3,
      sqs: process.env.AWS_ENDPOINT_URL_SQS,
    },
  });
  const reports = new S3ReportStore({ client: clients.s3, bucket });
  deps = {
    engine: engine({
      store: new DynamoDbJobStore({ client: clients.documents, tableName: table, reports }),
      queue: new SqsWorkQueue({ client: clients.sqs, queueUrl }),
      reports,
    }),
    batches: new DynamoDbBatchStore({ client: clients.documents, tableName: table }),
  };
  source = {
    source: { kind: 'jsonl', uri: `s3://${bucket}/${key}` },
    openBytes: openS3Object(clients.s3, { bucket, key }),
    readDocument: (relative) => readS3Object(clients.s3, { bucket, key: relative }),
  };
}
const started = performance.now();
const { batch } = await openBatch(deps, source.source, {
  tenant: 'default',
  workflow: 'patent-count',
  options: { selection: 'auto', inFlight: 32 },
});
const done = await ingest(deps, source, batch.id, {
  onChunk: async () => {
    await admitBatch(deps, batch.id);
  },
});
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify({ lines: done.counts.records, items: done.counts.created, invalid: done.counts.invalid, seconds, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
process.exit(0);
