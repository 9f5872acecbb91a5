// The index-key backfill (`npm run migrate:aws`) on DynamoDB Local: jobs and a batch written as the
// code before ca6343b wrote them (no byStatusShard/byBatchKeys/due keys, legacy GSI1/GSI3 keys) are
// listed by nothing; after the migration the stores' own listings find them; a second run updates
// nothing; an update that meets a worker's commit is skipped and counted, never overwrites it.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import { DynamoDbBatchStore, DynamoDbJobStore, migrateIndexKeys } from '../../../../shared/backends/aws';
import type { Job } from '../../../../shared/engine/job-record';
import { newBatch } from '../../../../shared/ingest/batch';
import { makeJob, T0 } from '../../../support/factories';
import { REAL_PROCESS_TIMEOUT_MS } from '../../../support/timeouts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../../../..');
let emulators: AwsEmulators;

beforeAll(async () => {
  emulators = await startAwsEmulators({ secretsManager: false, sqsAndS3: false });
}, REAL_PROCESS_TIMEOUT_MS);
afterAll(async () => {
  await emulators?.stop();
});

/** Rewrite an item the way the code before ca6343b left it: legacy keys, none of the new ones. */
async function makeOld(tableName: string, key: { PK: string; SK: string }, remove: string[]) {
  await emulators.clients.documents.send(
    new UpdateCommand({
      TableName: tableName,
      Key: key,
      UpdateExpression: `SET GSI1PK = :legacy, GSI1SK = :legacy REMOVE ${remove.map((_, i) => `#r${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(remove.map((name, i) => [`#r${i}`, name])),
      ExpressionAttributeValues: { ':legacy': 'LEGACY' },
    }),
  );
}

/** The environment without any opflow or AWS setting, so the script sees only what a test gives it. */
function bareEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('OPFLOW_') && !name.startsWith('AWS_')),
  );
}

/** Runs the script with only the table's settings: no queue, bucket or secrets prefix. */
async function migrateWithScript(tableName: string, ...args: string[]) {
  const { stdout } = await run(
    path.join(root, 'node_modules/.bin/tsx'),
    ['scripts/migrate-aws.ts', ...args],
    {
      cwd: root,
      env: {
        ...bareEnv(),
        OPFLOW_TABLE_NAME: tableName,
        AWS_REGION: emulators.region,
        AWS_ENDPOINT_URL_DYNAMODB: emulators.clientConfig.endpoints?.dynamodb,
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      },
    },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

async function setup() {
  const tableName = await emulators.createTable();
  const client = emulators.clients.documents;
  const jobs = new DynamoDbJobStore({ client, tableName });
  const batches = new DynamoDbBatchStore({ client, tableName });
  const batch = newBatch({
    id: 'b-old',
    name: 'old batch',
    tenant: 'acme',
    workflow: 'novelty-check',
    source: { kind: 'jsonl', uri: 's3://inbox/old.jsonl' },
    options: { selection: 'auto', inFlight: 32 },
    now: T0,
  });
  await batches.create(batch);
  const old: Job[] = [
    makeJob({ id: 'job-a', tenant: 'acme', batchId: 'b-old', status: 'QUEUED', createdAt: T0 + 1 }),
    makeJob({
      id: 'job-b',
      tenant: 'acme',
      batchId: 'b-old',
      status: 'SUCCEEDED',
      createdAt: T0 + 2,
      finishedAt: T0 + 9,
    }),
    makeJob({ id: 'job-c', tenant: 'acme', status: 'WAITING', createdAt: T0 + 3 }),
  ];
  for (const job of old) await jobs.create(job);
  for (const job of old)
    await makeOld(tableName, { PK: `JOB#${job.id}`, SK: 'JOB' }, [
      'GSI4PK',
      'GSI4SK',
      'GSI5PK',
      'GSI5SK',
      'GSI2PK',
      'GSI2SK',
      'status',
    ]);
  await makeOld(tableName, { PK: 'BATCH#b-old', SK: 'META' }, ['GSI5PK', 'GSI5SK']);
  // One job written by today's code: already fine.
  const fresh = makeJob({
    id: 'job-new',
    tenant: 'acme',
    batchId: 'b-old',
    status: 'QUEUED',
    createdAt: T0 + 4,
  });
  await jobs.create(fresh);
  return { tableName, client, jobs, batches, old, fresh };
}

const ids = (page: { jobs: Job[] }) => page.jobs.map((job) => job.id).sort();

describe('migrate:aws (index key backfill)', () => {
  it(
    'needs only the table name and region, and names each one missing',
    async () => {
      const failure = await run(path.join(root, 'node_modules/.bin/tsx'), ['scripts/migrate-aws.ts'], {
        cwd: root,
        env: { ...bareEnv(), AWS_ENDPOINT_URL_DYNAMODB: 'not a url' },
      }).then(
        () => undefined,
        (error: { code?: number; stderr?: string }) => error,
      );
      expect(failure?.code).toBe(2);
      expect(failure?.stderr).toContain('OPFLOW_TABLE_NAME: is not set');
      expect(failure?.stderr).toContain('AWS_REGION: is not set');
      expect(failure?.stderr).toContain('AWS_ENDPOINT_URL_DYNAMODB: must be an http(s) URL');
      // The rest of opflow --backend aws's environment is not asked for.
      expect(failure?.stderr).not.toMatch(/OPFLOW_QUEUE_URL|OPFLOW_BUCKET_NAME|OPFLOW_API_KEY_SECRET_PREFIX/);
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    'makes old jobs and batches listable by batch and by status; a second run updates nothing',
    async () => {
      const { tableName, jobs, batches } = await setup();
      expect(ids(await jobs.list({ batchId: 'b-old' }))).toEqual(['job-new']);
      expect(ids(await jobs.list({ status: 'QUEUED' }))).toEqual(['job-new']);
      expect((await batches.list({})).batches).toEqual([]);

      const dry = await migrateWithScript(tableName, '--dry-run', '--json');
      expect(dry).toMatchObject({
        dryRun: true,
        scanned: 5,
        updated: 4,
        alreadyFine: 1,
        skippedByConflict: 0,
      });
      expect(ids(await jobs.list({ batchId: 'b-old' }))).toEqual(['job-new']);

      const first = await migrateWithScript(tableName, '--json', '--segments', '3');
      expect(first).toMatchObject({
        scanned: 5,
        updated: 4,
        alreadyFine: 1,
        skippedByConflict: 0,
        unreadable: 0,
      });

      expect(ids(await jobs.list({ batchId: 'b-old' }))).toEqual(['job-a', 'job-b', 'job-new']);
      expect(ids(await jobs.list({ batchId: 'b-old', status: 'SUCCEEDED' }))).toEqual(['job-b']);
      expect(ids(await jobs.list({ status: 'QUEUED' }))).toEqual(['job-a', 'job-new']);
      expect(ids(await jobs.list({ status: 'WAITING', tenant: 'acme' }))).toEqual(['job-c']);
      expect((await batches.list({ tenant: 'acme' })).batches.map((b) => b.id)).toEqual(['b-old']);
      // The due index too: the unfinished old jobs are found by the sweeper again.
      expect((await jobs.listDue(T0 + 10, 10)).map((job) => job.id).sort()).toEqual([
        'job-a',
        'job-c',
        'job-new',
      ]);

      const second = await migrateWithScript(tableName, '--json');
      expect(second).toMatchObject({ scanned: 5, updated: 0, alreadyFine: 5, skippedByConflict: 0 });
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it(
    "skips an item a worker commits between the scan and the update, keeping the worker's write",
    async () => {
      const { tableName, client, jobs } = await setup();
      let raced = false;
      // A worker commits job-a right before the migration's update of it reaches the table.
      const racing = new Proxy(client, {
        get(target, property) {
          if (property !== 'send') return Reflect.get(target, property, target);
          return async (command: { input: { Key?: { PK?: string } } }) => {
            if (!raced && command instanceof UpdateCommand && command.input.Key?.PK === 'JOB#job-a') {
              raced = true;
              const current = (await jobs.get('job-a'))!;
              const moved = { ...current, status: 'RUNNING' as const, version: current.version + 1 };
              expect(await jobs.commit(moved, current.version)).toBe(true);
            }
            return target.send(command as never);
          };
        },
      }) as DynamoDBDocumentClient;
      const first = await migrateIndexKeys({ client: racing, tableName, segments: 1 });
      expect(raced).toBe(true);
      expect(first).toMatchObject({ scanned: 5, updated: 3, alreadyFine: 1, skippedByConflict: 1 });
      const item = (
        await client.send(new GetCommand({ TableName: tableName, Key: { PK: 'JOB#job-a', SK: 'JOB' } }))
      ).Item!;
      expect(item).toMatchObject({ version: 2, status: 'RUNNING' });
      expect(JSON.parse(String(item.job))).toMatchObject({ status: 'RUNNING', version: 2 });
      expect(ids(await jobs.list({ status: 'RUNNING' }))).toEqual(['job-a']);

      const again = await migrateIndexKeys({ client, tableName });
      expect(again).toMatchObject({ scanned: 5, updated: 0, alreadyFine: 5, skippedByConflict: 0 });
    },
    REAL_PROCESS_TIMEOUT_MS,
  );
});
