/**
 * JobStore on one DynamoDB table (docs/concepts/job-table.md): a job is one item whose `job` attribute holds the
 * record as JSON; the keys around it serve every access pattern without a Scan:
 * get (PK), commit (conditional Put on `version`), create with an idempotency key (one
 * TransactWriteItems), due jobs (the sparse `due` index, 16 shards merged oldest first), jobs by
 * status (`byStatusShard`, 4 shards a status) or batch (`byBatchKeys`), both keys and filters only,
 * with opaque cursors.
 * Finished jobs leave through TTL.
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { ListParkedOptions, ParkedJob, ParkedJobs } from '../../engine/admission/parked-jobs';
import { type Batch, checkJobAndBatchVersions } from '../../engine/batch-store';
import { maxClockAheadMs, writerAheadMs } from '../../engine/clock-skew';
import { isTerminal, type Job, type JobStatus, jobStatuses } from '../../engine/job-record';
import type { JobPage, JobStore, ListJobsQuery, ReportStore } from '../../engine/ports';
import { formatIssues } from '../../errors/zod-issues';
import { decodeCursor, encodeCursor, type ListingKind } from './cursor';
import { batchMetaItem } from './dynamodb-batch-store';
import { queryItems } from './dynamodb-pages';
import { AwsConfigError, CorruptRecordError, JobAlreadyExistsError, JobTooLargeError } from './errors';
import {
  batchPartition,
  duePartition,
  dueShard,
  dueShardCount,
  idempotencyKey,
  jobKey,
  jobTableIndexes,
  parkedClasses,
  parkedSortKey,
  rateBucketKey,
  sortableTime,
  statusPartition,
  statusShard,
  statusShardCount,
  timeSortKey,
  waitKeysPartition,
  waitPartition,
} from './table';

/** Inputs larger than this (as JSON) are moved to the report store; the engine does the same. */
export const inlineInputLimitBytes = 32 * 1024;
/** Far enough below DynamoDB's 400 KB item limit to leave room for the keys and attributes. */
const maxJobBytes = 350 * 1024;
const defaultRetentionSeconds = 30 * 24 * 3600;
const defaultPageSize = 50;
const maxPageSize = 1000;

type Item = Record<string, unknown>;

/** Just enough shape to catch an item that is not a job record; the rest is trusted. */
const storedJobSchema = z
  .object({
    id: z.string(),
    tenant: z.string(),
    status: z.enum(jobStatuses),
    version: z.number().int(),
    nextRunAt: z.number(),
    updatedAt: z.number(),
    createdAt: z.number(),
  })
  .passthrough();

export interface DynamoDbJobStoreOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Where inputs over 32 KB go (`reports/<jobId>/input.json`); without it, such inputs stay inline. */
  reports?: ReportStore | undefined;
  /** How long a finished job stays before TTL removes it, when the job sets no `expiresAt` (default 30 days). */
  retentionSeconds?: number | undefined;
}

function isConditionFailure(error: unknown): boolean {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error as { name?: string }).name === 'ConditionalCheckFailedException'
  );
}

/**
 * The attributes of a job's item that its indexes read: the keys of `byStatusShard`, `due` (sparse:
 * a finished job leaves it) and `byBatchKeys` (a job of a batch), and the `status` and `tenant` they
 * filter on. Every commit writes them; scripts/migrate-aws.ts sets them on items written before them.
 */
export function jobIndexAttributes(job: Job): Record<string, string> {
  return {
    status: job.status,
    tenant: job.tenant,
    GSI4PK: statusPartition(job.status, statusShard(job.id)),
    GSI4SK: timeSortKey(job.createdAt, job.id),
    ...(isTerminal(job.status)
      ? {}
      : {
          // A parked job waits in its key's line of parked jobs, not in the sweeper's shards.
          GSI2PK: job.parked ? waitPartition(job.parked.bucket) : duePartition(dueShard(job.id)),
          GSI2SK: job.parked
            ? parkedSortKey(job.parked.withinMs, job.nextRunAt, job.id, job.tenant, job.priority)
            : timeSortKey(job.nextRunAt, job.id),
        }),
    ...(job.batchId
      ? { GSI5PK: batchPartition(job.batchId), GSI5SK: timeSortKey(job.createdAt, job.id) }
      : {}),
  };
}

/** The job record of a job item (`job` attribute, JSON), checked; CorruptRecordError when it is not one. */
export function jobFromItem(item: Item, tableName: string): Job {
  const where = `item ${String(item.PK)} of table ${tableName}`;
  if (typeof item.job !== 'string') throw new CorruptRecordError(`${where} has no job record`);
  let value: unknown;
  try {
    value = JSON.parse(item.job);
  } catch (error) {
    throw new CorruptRecordError(`${where} holds a job record that is not JSON`, { cause: error });
  }
  const parsed = storedJobSchema.safeParse(value);
  if (!parsed.success) {
    throw new CorruptRecordError(`${where} is not a job record: ${formatIssues(parsed.error)}`);
  }
  return parsed.data as unknown as Job;
}

export class DynamoDbJobStore implements JobStore, ParkedJobs {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly reports: ReportStore | undefined;
  private readonly retentionSeconds: number;
  /** When this instance last registered each bucket with parked jobs (`noteParked`). */
  private readonly notedParked = new Map<string, number>();

  constructor(options: DynamoDbJobStoreOptions) {
    if (!options.tableName) throw new AwsConfigError('DynamoDbJobStore needs a table name');
    this.client = options.client;
    this.tableName = options.tableName;
    this.reports = options.reports;
    this.retentionSeconds = options.retentionSeconds ?? defaultRetentionSeconds;
  }

  /**
   * Insert a new job. With an idempotency key, the job and the key are written in one transaction;
   * when the key is already taken, the job it names is returned with `created: false`.
   */
  async create(job: Job): Promise<{ job: Job; created: boolean }> {
    const key = job.idempotencyKey;
    if (key) {
      const existing = await this.findByIdempotencyKey(job.tenant, key);
      if (existing) return { job: existing, created: false };
    }
    const stored = await this.offloadInput(job);
    const item = this.toItem(stored);
    if (!key) {
      try {
        await this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: item,
            ConditionExpression: 'attribute_not_exists(PK)',
          }),
        );
      } catch (error) {
        if (isConditionFailure(error)) throw new JobAlreadyExistsError(job.id);
        throw error;
      }
      return { job: stored, created: true };
    }

    const idem = idempotencyKey(job.tenant, key);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.client.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: this.tableName,
                  Item: item,
                  ConditionExpression: 'attribute_not_exists(PK)',
                },
              },
              {
                Put: {
                  TableName: this.tableName,
                  Item: {
                    ...idem,
                    jobId: job.id,
                    tenant: job.tenant,
                    // Outlives the job (TTL counts from its deadline); a key left pointing at nothing is replaced below.
                    expiresAt: Math.floor(job.deadlineAt / 1000) + this.retentionSeconds,
                  },
                  ConditionExpression: 'attribute_not_exists(PK)',
                },
              },
            ],
          }),
        );
        return { job: stored, created: true };
      } catch (error) {
        const reasons = cancellationCodes(error);
        if (!reasons || attempt >= 8) throw error;
        // Lost to another create with the same key (its transaction won, or is winning: a conflict).
        const existing = await this.findByIdempotencyKey(job.tenant, key);
        if (existing) return { job: existing, created: false };
        if (reasons[0] === 'ConditionalCheckFailed') throw new JobAlreadyExistsError(job.id);
        if (reasons[1] === 'ConditionalCheckFailed') await this.dropDanglingKey(idem);
        // A conflicting transaction is still in flight: give it a moment before looking again.
        else await pause(10 * (attempt + 1));
      }
    }
  }

  async get(id: string): Promise<Job | undefined> {
    const answer = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: jobKey(id), ConsistentRead: true }),
    );
    return answer.Item ? this.fromItem(answer.Item) : undefined;
  }

  async commit(job: Job, expectedVersion: number): Promise<boolean> {
    if (job.version !== expectedVersion + 1) {
      throw new RangeError(`commit of job ${job.id}: version ${job.version} is not ${expectedVersion} + 1`);
    }
    const item = this.toItem(this.failedIfTooLarge(await this.offloadInput(job)));
    // The key is registered before its parked job exists: the sweeper can always find it.
    if (job.parked && !isTerminal(job.status)) await this.noteParked(job.parked.bucket, job.updatedAt);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: '#version = :expected',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':expected': expectedVersion },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
    return true;
  }

  /**
   * `commit` and the job's batch (its `META` item, on its version) in one TransactWriteItems, or
   * neither: false when either lost to another writer.
   */
  async commitWithBatch(
    job: Job,
    expectedVersion: number,
    batch: Batch,
    expectedBatchVersion: number,
  ): Promise<boolean> {
    checkJobAndBatchVersions(job, expectedVersion, batch, expectedBatchVersion);
    const item = this.toItem(this.failedIfTooLarge(await this.offloadInput(job)));
    if (job.parked && !isTerminal(job.status)) await this.noteParked(job.parked.bucket, job.updatedAt);
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: item,
                ConditionExpression: '#version = :expected',
                ExpressionAttributeNames: { '#version': 'version' },
                ExpressionAttributeValues: { ':expected': expectedVersion },
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: batchMetaItem(batch),
                ConditionExpression: '#version = :expected',
                ExpressionAttributeNames: { '#version': 'version' },
                ExpressionAttributeValues: { ':expected': expectedBatchVersion },
              },
            },
          ],
        }),
      );
    } catch (error) {
      // Lost to another writer, or to a transaction on either item under way: the caller reads again.
      if (
        cancellationCodes(error)?.some(
          (code) => code === 'ConditionalCheckFailed' || code === 'TransactionConflict',
        )
      )
        return false;
      throw error;
    }
    return true;
  }

  /**
   * Parked jobs of a key's bucket due at or before `until` (`ParkedJobs.listParked`): class by class
   * (`A` calls that advance a job first, see `parkedSortKey`), of each class each tenant's soonest
   * `perTenant`, merged soonest first, from the `due` index's `WAIT#<bucket>` partition (keys only:
   * the releaser reads each job whole and moves it only at the version it read). A class's tenants
   * are found one Query each (`parkedTenantRange`: a Query from after the last tenant read finds the
   * next one), and one more finds none after the last; the rows written before the tenant was in
   * their key (`parkedOldKeyRange`) cost one more Query a class, only with `oldKeys`.
   */
  async listParked(
    bucket: string,
    until: number,
    limit: number,
    options: ListParkedOptions = {},
  ): Promise<ParkedJob[]> {
    // Loaded on first use: only the step worker's release rounds and the sweeper read parked rows.
    const { listParkedRows } = await import('./dynamodb-parked-rows');
    const query = (range: [string, string], count: number, start?: Item) =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: jobTableIndexes.due,
          KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK BETWEEN :low AND :high',
          ExpressionAttributeValues: { ':pk': waitPartition(bucket), ':low': range[0], ':high': range[1] },
          Limit: count,
          ExclusiveStartKey: start,
        }),
      );
    return listParkedRows(query, parkedClasses, until, limit, options);
  }

  /**
   * When the key's line of tokens ends, as seen at `now`: the latest token granted, reserved or
   * booked in its bucket item (`RATE#<bucket>`) up to `now + soonMs` (default 30 s), undefined
   * without one. Read by the sweeper without the rate limiter: a line that ended a while ago means
   * no commit of the key is coming to release its parked jobs. A token booked minutes ahead (a
   * poll of a long task) is a commit coming then, not soon: it does not hold the key's parked jobs
   * back until then.
   */
  async lineEndsAt(bucket: string, now: number, soonMs = 30_000): Promise<number | undefined> {
    const answer = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: rateBucketKey(bucket),
        ConsistentRead: true,
        ProjectionExpression: 'lastTokenAt, booked',
      }),
    );
    const item = answer.Item;
    const times = [
      item?.lastTokenAt,
      ...(Array.isArray(item?.booked) ? (item.booked as unknown[]) : []).filter(
        (time) => typeof time === 'number' && time <= now + soonMs,
      ),
    ].filter((time): time is number => typeof time === 'number' && Number.isFinite(time));
    return times.length > 0 ? Math.max(...times) : undefined;
  }

  /** The buckets that have parked jobs (or had, within a day): the sweeper looks at each. */
  async parkedBuckets(): Promise<string[]> {
    const items = await queryItems(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': waitKeysPartition },
      ProjectionExpression: 'SK',
    });
    return items.map((item) => String(item.SK));
  }

  /**
   * Registers a bucket that has parked jobs, so the sweeper finds them: at most once a minute per
   * bucket from this instance (a plain Put; the item expires a day after the last one).
   */
  private async noteParked(bucket: string, now: number): Promise<void> {
    const last = this.notedParked.get(bucket);
    if (last !== undefined && now - last < 60_000 && now >= last) return;
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          PK: waitKeysPartition,
          SK: bucket,
          notedAt: now,
          expiresAt: Math.floor(now / 1000) + 24 * 3600,
        },
      }),
    );
    this.notedParked.set(bucket, now);
  }

  /**
   * Unfinished jobs created by a clock ahead of `now`'s (their `createdAt` in its future: a CLI on a
   * machine whose clock is fast) and still stamped ahead, whatever their call: from the status
   * index's shards of each unfinished status, keys after `now` plus the tolerance (usually none: a
   * few empty queries). The sweeper decides which it sends (engine/sweep.ts's `sentWhenWrittenAhead`).
   * A job only updated by such a clock (a retry) is not found here.
   */
  async listWrittenAhead(now: number, limit: number): Promise<Job[]> {
    if (limit <= 0) return [];
    const after = sortableTime(now + maxClockAheadMs);
    const pages = await Promise.all(
      (['QUEUED', 'RUNNING', 'WAITING'] as const).flatMap((status) =>
        Array.from({ length: statusShardCount }, (_, shard) =>
          this.queryIndex({
            index: jobTableIndexes.byStatusShard,
            partitionName: 'GSI4PK',
            partition: statusPartition(status, shard),
            sortName: 'GSI4SK',
            after,
            descending: false,
            want: limit,
          }),
        ),
      ),
    );
    const ids = [...new Set(pages.flat().map((key) => String(key.PK).slice('JOB#'.length)))].slice(0, limit);
    const jobs = ids.length > 0 ? await this.getMany(ids) : [];
    return jobs.filter((job) => !isTerminal(job.status) && writerAheadMs(job, now) > 0);
  }

  /** Non-terminal jobs due at or before `now`, oldest `nextRunAt` first, from all 16 shards of `due`. */
  async listDue(now: number, limit: number): Promise<Job[]> {
    if (limit <= 0) return [];
    const upper = sortableTime(now + 1);
    const shards = await Promise.all(
      Array.from({ length: dueShardCount }, (_, shard) =>
        this.queryIndex({
          index: jobTableIndexes.due,
          partitionName: 'GSI2PK',
          partition: duePartition(shard),
          sortName: 'GSI2SK',
          before: upper,
          descending: false,
          want: limit,
        }),
      ),
    );
    const keys = shards
      .flat()
      .sort((a, b) => compare(String(a.GSI2SK), String(b.GSI2SK)))
      .slice(0, limit);
    const jobs = await this.getMany(keys.map((key) => String(key.PK).slice('JOB#'.length)));
    // The index is eventually consistent: check each job against the item itself.
    return jobs
      .filter((job) => !isTerminal(job.status) && job.nextRunAt <= now)
      .sort((a, b) => a.nextRunAt - b.nextRunAt || compare(a.id, b.id));
  }

  /**
   * Jobs of a batch (oldest first), or of a status, or of every status (newest first, as the local
   * store lists them), optionally of one tenant; `limit` defaults to 50 (at most 1000).
   */
  async list(query: ListJobsQuery): Promise<JobPage> {
    const limit = Math.min(maxPageSize, Math.max(1, Math.floor(query.limit ?? defaultPageSize)));
    const kind: ListingKind = query.batchId ? 'batch' : query.status ? 'status' : 'all';
    const after = query.cursor ? decodeCursor(query.cursor, kind) : undefined;
    const filter: Record<string, string> = {};
    if (query.tenant) filter.tenant = query.tenant;
    if (query.batchId && query.status) filter.status = query.status;

    let items: Item[];
    let sortName: string;
    if (query.batchId) {
      // Keys, tenant and status only: the page's jobs are then read whole (one BatchGet).
      sortName = 'GSI5SK';
      items = await this.queryIndex({
        index: jobTableIndexes.byBatchKeys,
        partitionName: 'GSI5PK',
        partition: batchPartition(query.batchId),
        sortName,
        ...(after ? { after } : {}),
        descending: false,
        want: limit + 1,
        filter,
      });
    } else {
      // Keys and tenant only: the page's jobs are then read whole (one BatchGet).
      sortName = 'GSI4SK';
      const statuses: readonly JobStatus[] = query.status ? [query.status] : jobStatuses;
      const pages = await Promise.all(
        statuses.flatMap((status) =>
          Array.from({ length: statusShardCount }, (_, shard) =>
            this.queryIndex({
              index: jobTableIndexes.byStatusShard,
              partitionName: 'GSI4PK',
              partition: statusPartition(status, shard),
              sortName,
              ...(after ? { before: after } : {}),
              descending: true,
              want: limit + 1,
              filter,
            }),
          ),
        ),
      );
      items = pages.flat().sort((a, b) => compare(String(b.GSI4SK), String(a.GSI4SK)));
    }
    const wanted = items.slice(0, limit);
    const byId = new Map(
      (await this.getMany(wanted.map((item) => String(item.PK).slice('JOB#'.length)))).map((job) => [
        job.id,
        job,
      ]),
    );
    // A job deleted (TTL) between the query and the read is left out; one whose status changed
    // since is shown as it is now.
    const jobs = wanted.flatMap((item) => byId.get(String(item.PK).slice('JOB#'.length)) ?? []);
    const last = wanted.at(-1);
    return items.length > limit && last
      ? { jobs, cursor: encodeCursor(kind, String(last[sortName])) }
      : { jobs };
  }

  async findByIdempotencyKey(tenant: string, key: string): Promise<Job | undefined> {
    const answer = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: idempotencyKey(tenant, key), ConsistentRead: true }),
    );
    const jobId = answer.Item?.jobId;
    return typeof jobId === 'string' ? this.get(jobId) : undefined;
  }

  /** The jobs of many keys: one BatchGetItem per 100 keys, then one per 100 jobs (a batch's outputs). */
  async findByIdempotencyKeys(tenant: string, keys: readonly string[]): Promise<Map<string, Job>> {
    const byPk = new Map([...new Set(keys)].map((key) => [idempotencyKey(tenant, key).PK, key]));
    const unique = [...byPk.values()];
    const jobIds = new Map<string, string>();
    for (let start = 0; start < unique.length; start += 100) {
      let wanted: Record<string, unknown>[] = unique
        .slice(start, start + 100)
        .map((key) => idempotencyKey(tenant, key));
      for (let attempt = 0; wanted.length > 0; attempt++) {
        if (attempt > 10)
          throw new Error(`BatchGetItem left ${wanted.length} keys unprocessed after ${attempt} tries`);
        const answer = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: wanted, ConsistentRead: true } } }),
        );
        for (const item of answer.Responses?.[this.tableName] ?? []) {
          const key = byPk.get(String(item.PK));
          if (key !== undefined && typeof item.jobId === 'string') jobIds.set(item.jobId, key);
        }
        wanted = answer.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    const found = new Map<string, Job>();
    for (const job of await this.getMany([...jobIds.keys()])) {
      const key = jobIds.get(job.id);
      if (key !== undefined) found.set(key, job);
    }
    return found;
  }

  /** An idempotency key whose job has expired: remove it, unless it changed meanwhile. */
  private async dropDanglingKey(key: { PK: string; SK: string }): Promise<void> {
    const answer = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    if (!answer.Item) return;
    try {
      await this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: key,
          ConditionExpression: 'jobId = :jobId',
          ExpressionAttributeValues: { ':jobId': answer.Item.jobId },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /** A large inline input goes to the report store (once per job: the key is derived from the id). */
  private async offloadInput(job: Job): Promise<Job> {
    if (!this.reports || !('inline' in job.input)) return job;
    const serialized = JSON.stringify(job.input.inline) ?? 'null';
    if (Buffer.byteLength(serialized) <= inlineInputLimitBytes) return job;
    const ref = `reports/${job.id}/input.json`;
    await this.reports.put(ref, serialized, 'application/json');
    return { ...job, input: { ref } };
  }

  /**
   * A commit that would outgrow the item fails the job at once (kind `record-too-large`), at the
   * version it was to write, with the bulky parts of the record (context, pending options, a kept
   * answer) dropped: retrying the same write could only fail the same way until the message budget.
   */
  private failedIfTooLarge(job: Job): Job {
    const bytes = Buffer.byteLength(JSON.stringify(job));
    if (bytes <= maxJobBytes || isTerminal(job.status)) return job;
    const message = `the job's record grew to ${bytes} bytes as JSON, over the ${maxJobBytes}-byte budget of one DynamoDB item (400 KB); its step's data belongs in the report store`;
    const at = job.updatedAt;
    return {
      ...job,
      status: 'FAILED',
      context: {},
      pending: undefined,
      unsaved: undefined,
      parked: undefined,
      tokenAt: undefined,
      inFlightSince: undefined,
      lastError: { step: job.step, kind: 'record-too-large', message, retryable: false, at },
      finishedAt: at,
    };
  }

  private toItem(job: Job): Item {
    const record = JSON.stringify(job);
    if (Buffer.byteLength(record) > maxJobBytes) {
      throw new JobTooLargeError(
        `job ${job.id} is ${Buffer.byteLength(record)} bytes as JSON, over the ${maxJobBytes}-byte item budget; ` +
          'keep large data in the report store',
      );
    }
    const terminal = isTerminal(job.status);
    const expiresAt =
      job.expiresAt ??
      (terminal ? Math.floor((job.finishedAt ?? job.updatedAt) / 1000) + this.retentionSeconds : undefined);
    return {
      ...jobKey(job.id),
      job: record,
      version: job.version,
      ...jobIndexAttributes(job),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    };
  }

  private fromItem(item: Item): Job {
    return jobFromItem(item, this.tableName);
  }

  /** Up to `want` items of one index partition, after (or before) a sort key, in index order. */
  private async queryIndex(spec: {
    index: string;
    partitionName: string;
    partition: string;
    sortName: string;
    after?: string;
    before?: string;
    descending: boolean;
    want: number;
    filter?: Record<string, string>;
  }): Promise<Item[]> {
    const names: Record<string, string> = { '#pk': spec.partitionName };
    const values: Record<string, unknown> = { ':pk': spec.partition };
    let condition = '#pk = :pk';
    if (spec.after !== undefined) {
      condition += ' AND #sk > :after';
      names['#sk'] = spec.sortName;
      values[':after'] = spec.after;
    } else if (spec.before !== undefined) {
      condition += ' AND #sk < :before';
      names['#sk'] = spec.sortName;
      values[':before'] = spec.before;
    }
    const filters = Object.entries(spec.filter ?? {}).map(([name, value], index) => {
      names[`#f${index}`] = name;
      values[`:f${index}`] = value;
      return `#f${index} = :f${index}`;
    });
    return queryItems(
      this.client,
      {
        TableName: this.tableName,
        IndexName: spec.index,
        KeyConditionExpression: condition,
        ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: !spec.descending,
        // A filter drops items after the limit is applied: read more per page when filtering.
        Limit: filters.length > 0 ? Math.max(spec.want * 4, 100) : spec.want,
      },
      spec.want,
    );
  }

  /** Read jobs by id with BatchGetItem (100 per request, unprocessed keys asked again). */
  async getMany(ids: readonly string[]): Promise<Job[]> {
    const jobs: Job[] = [];
    for (let start = 0; start < ids.length; start += 100) {
      let keys: Record<string, unknown>[] = ids.slice(start, start + 100).map(jobKey);
      for (let attempt = 0; keys.length > 0; attempt++) {
        if (attempt > 10)
          throw new Error(`BatchGetItem left ${keys.length} keys unprocessed after ${attempt} tries`);
        const answer = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of answer.Responses?.[this.tableName] ?? []) jobs.push(this.fromItem(item));
        keys = answer.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return jobs;
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The per-item reasons of a cancelled transaction, or undefined for any other error. */
function cancellationCodes(error: unknown): (string | undefined)[] | undefined {
  if (
    !(error instanceof TransactionCanceledException) &&
    (error as { name?: string }).name !== 'TransactionCanceledException'
  ) {
    return undefined;
  }
  const reasons = (error as TransactionCanceledException).CancellationReasons ?? [];
  return reasons.map((reason) => reason.Code);
}
