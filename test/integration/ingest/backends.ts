/**
 * The ingestion core's dependencies on each backend: the local one (SQLite file, report folder) and
 * the aws one (DynamoDB Local, fauxqs' SQS and S3). Nothing here calls the platform: jobs are
 * released into the store and queue, and the tests finish them by hand where they need to.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AwsEmulators, startAwsEmulators } from '../../../scripts/emulators/aws-emulators';
import {
  DynamoDbBatchStore,
  DynamoDbJobStore,
  S3ReportStore,
  SqsWorkQueue,
} from '../../../shared/backends/aws';
import { createLocalBackend, EnvKeySource } from '../../../shared/backends/local';
import type { EngineDeps } from '../../../shared/engine/deps';
import type { IngestDeps } from '../../../shared/ingest/ingest';
import { writeJobReport } from '../../../shared/reports/write-job-report';
import { workflows } from '../../../shared/workflows';
import { unlimitedRate } from '../../support/memory-ports';

export interface IngestWorld {
  deps: IngestDeps;
  /** Finish a released job as if it had run (SUCCEEDED or FAILED), with some usage. */
  finish(jobId: string, status: 'SUCCEEDED' | 'FAILED'): Promise<void>;
  close(): Promise<void>;
}

const noClient = new Proxy(
  {},
  {
    get: () => async () => {
      throw new Error('no upstream calls in ingestion tests');
    },
  },
);

function engine(parts: Pick<EngineDeps, 'store' | 'queue' | 'reports'>): EngineDeps {
  return {
    ...parts,
    keys: new EnvKeySource({ env: {} }),
    rateLimiter: unlimitedRate,
    clock: { now: () => Date.now() },
    random: Math.random,
    client: noClient as EngineDeps['client'],
    workflows,
    writeReport: writeJobReport,
  };
}

async function finisher(deps: EngineDeps, jobId: string, status: 'SUCCEEDED' | 'FAILED') {
  const job = await deps.store.get(jobId);
  if (!job) throw new Error(`no job ${jobId}`);
  const now = Date.now();
  await deps.store.commit(
    {
      ...job,
      status,
      version: job.version + 1,
      finishedAt: now,
      updatedAt: now,
      usage: { ...job.usage, calls: 2, billedUnits: 3 },
      lastError:
        status === 'FAILED'
          ? { step: job.step, kind: 'upstream-failed', message: 'the task failed', retryable: false, at: now }
          : undefined,
    },
    job.version,
  );
}

export function localWorld(): IngestWorld {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-ingest-'));
  const local = createLocalBackend({ dbPath: join(dir, 'jobs.db'), outDir: join(dir, 'out') });
  const deps = engine({ store: local.store, queue: local.queue, reports: local.reports });
  return {
    deps: { engine: deps, batches: local.batches },
    finish: (jobId, status) => finisher(deps, jobId, status),
    close: async () => {
      local.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function awsWorld(emulators: AwsEmulators): Promise<IngestWorld> {
  const tableName = await emulators.createTable();
  const reports = new S3ReportStore({ client: emulators.clients.s3, bucket: emulators.createBucket() });
  const deps = engine({
    store: new DynamoDbJobStore({ client: emulators.clients.documents, tableName, reports }),
    queue: new SqsWorkQueue({ client: emulators.clients.sqs, queueUrl: emulators.createQueue().queueUrl }),
    reports,
  });
  return {
    deps: {
      engine: deps,
      batches: new DynamoDbBatchStore({ client: emulators.clients.documents, tableName }),
    },
    finish: (jobId, status) => finisher(deps, jobId, status),
    close: async () => undefined,
  };
}

export { startAwsEmulators };
