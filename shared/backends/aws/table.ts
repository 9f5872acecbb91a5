/**
 * The single job table (docs/concepts/job-table.md): key formats, index names, and a
 * `createJobTable()` for emulators and tests. The CDK stack declares the same table; the names
 * here are the contract between the two.
 */
import { createHash } from 'node:crypto';
import { CreateTableCommand, type DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import type { JobPriority, JobStatus } from '../../engine/job-record';

/** Number of partitions of the `due` index: the sweeper queries every one of them. */
export const dueShardCount = 16;

/** Number of partitions per status of the `byStatusShard` index: listing queries every one. */
export const statusShardCount = 4;

export const jobTableIndexes = {
  /**
   * Legacy (projection ALL, keyed on updatedAt: every commit rewrote the whole item in it). No job
   * is written to it any more; kept in the table for one release, since CloudFormation changes one
   * index per update. Remove it in the next deploy.
   */
  byStatus: 'byStatus',
  due: 'due',
  /**
   * Legacy (projection ALL: every commit of a job with a batch rewrote the whole item in it). No item
   * carries its keys (GSI3) any more; removed in the next deploy, like `byStatus`.
   */
  byBatch: 'byBatch',
  /**
   * Jobs by status, newest first: keyed on the status (in `statusShardCount` partitions by a hash
   * of the id) and the creation time, projecting only `tenant`. An index row changes only when the
   * job's status does, never at other commits.
   */
  byStatusShard: 'byStatusShard',
  /**
   * Jobs of a batch, oldest first (`BATCH#<batchId>`), and the batches themselves, newest first
   * (`BATCHES`): keyed on the creation time, projecting only `tenant` and `status` (the listing
   * filters). A row changes only when the job's status does.
   */
  byBatchKeys: 'byBatchKeys',
} as const;

/** Attributes the byStatusShard index projects beside its keys (listing's tenant filter). */
export const statusIndexProjection = ['tenant'] as const;

/** Attributes the byBatchKeys index projects beside its keys (listing's tenant and status filters). */
export const batchIndexProjection = ['tenant', 'status'] as const;

/** The byBatchKeys partition that lists the batches themselves. */
export const batchListPartition = 'BATCHES';

/** The TTL attribute (epoch seconds). */
export const ttlAttribute = 'expiresAt';

/** A timestamp in milliseconds as a 13-digit string, so that string order is time order. */
export function sortableTime(ms: number): string {
  return String(Math.max(0, Math.floor(ms))).padStart(13, '0');
}

/** Tenant names go inside keys joined by `#`: escape them so `a#b` cannot pose as tenant `a`. */
function keyPart(value: string): string {
  return encodeURIComponent(value);
}

export function jobKey(jobId: string): { PK: string; SK: string } {
  return { PK: `JOB#${jobId}`, SK: 'JOB' };
}

/** Which rate bucket (key fingerprint) a tenant's API key draws from (dynamodb-key-buckets.ts). */
export function tenantBucketKey(tenant: string): { PK: string; SK: string } {
  return { PK: `KEYOF#${keyPart(tenant)}`, SK: 'BUCKET' };
}

export function idempotencyKey(tenant: string, key: string): { PK: string; SK: string } {
  return { PK: `IDEM#${keyPart(tenant)}#${key}`, SK: 'IDEM' };
}

/**
 * The engine names buckets by key fingerprint (16 hex digits of the key's SHA-256), used as is;
 * any other name is hashed the same way, so a raw API key can never end up in the table.
 */
export function rateBucketKey(bucket: string): { PK: string; SK: string } {
  const name = /^[0-9a-f]{16}$/.test(bucket)
    ? bucket
    : createHash('sha256').update(bucket).digest('hex').slice(0, 16);
  return { PK: `RATE#${name}`, SK: 'BUCKET' };
}

export function statusPartition(status: JobStatus, shard?: number): string {
  return shard === undefined ? `STATUS#${status}` : `STATUS#${status}#${shard}`;
}

/** Which partition of its status a job lives in (`byStatusShard`): a stable hash of its id. */
export function statusShard(jobId: string): number {
  return createHash('sha256').update(jobId).digest()[1]! % statusShardCount;
}

/** Which of the 16 `due` partitions a job lives in: a stable hash of its id. */
export function dueShard(jobId: string): number {
  return createHash('sha256').update(jobId).digest()[0]! % dueShardCount;
}

export function duePartition(shard: number): string {
  return `DUE#${String(shard).padStart(2, '0')}`;
}

/**
 * Where a parked job's `due` row lives instead of a `DUE#` shard: one
 * partition per API key's bucket, in due order, read by that key's releasers with one Query. A
 * key's commits are bounded by its rate limit, so one partition holds them.
 */
export function waitPartition(bucket: string): string {
  return `WAIT#${bucket}`;
}

/**
 * The sort key of a parked job's `due` row: its class (`0` the calls of `high` jobs; `A` calls that
 * advance a job, horizon over 7.5 s; `B` speculative polls; `C` new jobs' first calls, the least
 * likely polls and calls of a tenant or batch ahead of its fair share, horizon 2 s or less), its
 * tenant (`t:` and the name escaped), then its due time: a releaser reads class by class, and within
 * a class each tenant's soonest (`parkedTenantRange`), so that a round reaches every tenant with
 * parked jobs whatever their counts (ordered by one key's due time alone, the soonest dozen were the
 * first tenant to submit's). Rows written before the tenant was in the key
 * (`<class>#<due>#<id>`) sort before every tenant's (`t` after the digits). Read back by
 * dynamodb-parked-rows.ts (`parkedTenantRange`, `parsedParkedKey`).
 */
export function parkedSortKey(
  withinMs: number,
  nextRunAt: number,
  jobId: string,
  tenant: string,
  priority?: JobPriority | undefined,
): string {
  return `${parkedClassOf(withinMs, priority)}#t:${keyPart(tenant)}#${timeSortKey(nextRunAt, jobId)}`;
}

export const parkedClasses = ['0', 'A', 'B', 'C'] as const;

export function parkedClassOf(
  withinMs: number,
  priority?: JobPriority | undefined,
): (typeof parkedClasses)[number] {
  if (priority === 'high') return '0';
  return withinMs > 7_500 ? 'A' : withinMs > 2_000 ? 'B' : 'C';
}

/** The registry of keys that have parked jobs (`WAITKEYS`, one item per bucket): the sweeper reads it. */
export const waitKeysPartition = 'WAITKEYS';

/**
 * The partition of the change log (dynamodb-change-log.ts) holding a tenant's changes (or
 * everyone's: `*`) stamped within the hour of `ms`.
 */
export function changePartition(tenant: string, ms: number): string {
  const hour = new Date(ms).toISOString().slice(0, 13);
  return `EVT#${tenant === '*' ? '*' : keyPart(tenant)}#${hour}`;
}

export function batchPartition(batchId: string): string {
  return `BATCH#${batchId}`;
}

/** Sort key of the indexes: a time and the job id (unique, so cursors are exact). */
export function timeSortKey(ms: number, jobId: string): string {
  return `${sortableTime(ms)}#${jobId}`;
}

/**
 * Create the job table with its indexes and TTL, on-demand (for emulators and tests; the
 * CDK stack owns the deployed table).
 */
export async function createJobTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const stringKey = (name: string) => ({ AttributeName: name, AttributeType: 'S' as const });
  const index = (name: string, pk: string, sk: string, projection: 'ALL' | 'KEYS_ONLY' | string[]) => ({
    IndexName: name,
    KeySchema: [
      { AttributeName: pk, KeyType: 'HASH' as const },
      { AttributeName: sk, KeyType: 'RANGE' as const },
    ],
    Projection: Array.isArray(projection)
      ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: projection }
      : { ProjectionType: projection },
  });
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      // Read by the events function (the change log of GET /events).
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      AttributeDefinitions: [
        'PK',
        'SK',
        'GSI1PK',
        'GSI1SK',
        'GSI2PK',
        'GSI2SK',
        'GSI3PK',
        'GSI3SK',
        'GSI4PK',
        'GSI4SK',
        'GSI5PK',
        'GSI5SK',
      ].map(stringKey),
      KeySchema: [
        { AttributeName: 'PK', KeyType: 'HASH' },
        { AttributeName: 'SK', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        index(jobTableIndexes.byStatus, 'GSI1PK', 'GSI1SK', 'ALL'),
        index(jobTableIndexes.due, 'GSI2PK', 'GSI2SK', 'KEYS_ONLY'),
        index(jobTableIndexes.byBatch, 'GSI3PK', 'GSI3SK', 'ALL'),
        index(jobTableIndexes.byStatusShard, 'GSI4PK', 'GSI4SK', [...statusIndexProjection]),
        index(jobTableIndexes.byBatchKeys, 'GSI5PK', 'GSI5SK', [...batchIndexProjection]),
      ],
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
    }),
  );
}
