/**
 * What the ingest function has to do, kept in the job table instead of an SQS queue (no idle
 * polling): one partition `INGESTDUE` of entries, each an upload under `inbox/` to read or a batch to
 * drive on, with the time it is due. The function takes an entry by moving its due time to the end
 * of its own lease (a conditional write on the due time it read), so two deliveries of one S3 event
 * or a function and the sweeper meet one entry, and an entry whose driver died comes due again.
 *
 * Drivers at once are bounded by slot items (`INGESTSLOT` / `0`, `1`, ...): an invocation works only
 * while it holds one, so an upload of 1,000 documents (1,000 S3 events) runs at most that many
 * drivers; the other invocations record their uploads and end within milliseconds.
 *
 * A job of a batch that ends wakes its batch ({@link DynamoDbIngestSchedule.wake}): a batch entry
 * that no driver holds and no wake-up is on its way to is made due at once (the caller then invokes
 * the function); otherwise the end is only counted (`ends`), and the driver that holds the entry
 * drives the batch again when the count moved during its round. So a batch is looked at as its jobs
 * end, at most one invocation on its way per batch, and nothing runs while none ends.
 */
import { createHash } from 'node:crypto';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';

export const ingestDuePartition = 'INGESTDUE';
const slotPartition = 'INGESTSLOT';

/** An upload under `inbox/` as its S3 event names it. */
export interface InboxUploadRef {
  bucket: string;
  key: string;
  etag?: string | undefined;
}

/** One entry of the ingest schedule. */
export type IngestEntry =
  | { kind: 'upload'; id: string; dueAt: number; upload: InboxUploadRef }
  | {
      kind: 'batch';
      id: string;
      dueAt: number;
      batchId: string;
      rounds: number;
      /** Ends of its jobs announced so far (a counter; see `wake`). */
      ends: number;
    };

/** What a job's end did to its batch's entry (see `wake`). */
export type BatchWake = 'woken' | 'noted' | 'none';

/** A wake-up on its way this long is taken as lost: the next end sends another. */
export const WAKE_LOST_AFTER_MS = 60_000;

function isConditionFailure(error: unknown): boolean {
  return (error as { name?: string }).name === 'ConditionalCheckFailedException';
}

/** An upload's entry id: the same object version (bucket, key, ETag) is one entry, however often announced. */
export function uploadEntryId(upload: InboxUploadRef): string {
  const digest = createHash('sha256')
    .update(`${upload.bucket}\n${upload.key}\n${upload.etag ?? ''}`)
    .digest('hex');
  return `UPLOAD#${digest.slice(0, 32)}`;
}

export const batchEntryId = (batchId: string) => `BATCH#${batchId}`;

export class DynamoDbIngestSchedule {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Records an upload to read, due at `now`; an entry already there (the same object version) is kept. */
  async addUpload(upload: InboxUploadRef, now: number): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            PK: ingestDuePartition,
            SK: uploadEntryId(upload),
            kind: 'upload',
            dueAt: now,
            bucket: upload.bucket,
            key: upload.key,
            ...(upload.etag ? { etag: upload.etag } : {}),
          },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /** Whether an upload of this object version is waiting to be read (the function received its event). */
  async hasUpload(upload: InboxUploadRef): Promise<boolean> {
    const entries = await this.entries();
    return entries.some((entry) => entry.id === uploadEntryId(upload));
  }

  /** Every entry, soonest due first (a handful: one per waiting upload and running batch). */
  async entries(): Promise<IngestEntry[]> {
    const found: IngestEntry[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': ingestDuePartition },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const entry = entryOf(item);
        if (entry) found.push(entry);
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return found.sort((a, b) => a.dueAt - b.dueAt);
  }

  /** The entries due at `now`, soonest first. */
  async due(now: number): Promise<IngestEntry[]> {
    return (await this.entries()).filter((entry) => entry.dueAt <= now);
  }

  /**
   * Takes an entry until `until` (it is due again then, should its driver die): false when another
   * invocation took or changed it since it was read.
   */
  async take(entry: IngestEntry, until: number): Promise<boolean> {
    try {
      // Held until then (a wake-up leaves it to its holder); a wake-up on its way has arrived.
      const answer = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { PK: ingestDuePartition, SK: entry.id },
          UpdateExpression: 'SET dueAt = :until, takenUntil = :until REMOVE wokenAt',
          ConditionExpression: 'dueAt = :seen',
          ExpressionAttributeValues: { ':until': until, ':seen': entry.dueAt },
          ReturnValues: 'ALL_NEW',
        }),
      );
      entry.dueAt = until;
      if (entry.kind === 'batch') entry.ends = Number(answer.Attributes?.ends ?? 0);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Removes an entry that is done (an upload read, a batch settled). */
  async remove(entry: Pick<IngestEntry, 'id'>): Promise<void> {
    await this.client.send(
      new DeleteCommand({ TableName: this.tableName, Key: { PK: ingestDuePartition, SK: entry.id } }),
    );
  }

  /**
   * Makes a batch due at `dueAt` (created when missing), held by nobody. `round` counts one more
   * drive of it that changed nothing (its continuation budget); `restart` sets the count back to 0
   * (a new upload, a redrive). Its rounds and the ends of its jobs announced so far.
   */
  async scheduleBatch(
    batchId: string,
    dueAt: number,
    change: { round?: boolean; restart?: boolean } = {},
  ): Promise<{ rounds: number; ends: number }> {
    const answer = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { PK: ingestDuePartition, SK: batchEntryId(batchId) },
        UpdateExpression: change.restart
          ? 'SET dueAt = :due, #kind = :kind, batchId = :batch, rounds = :zero REMOVE takenUntil'
          : 'SET dueAt = :due, #kind = :kind, batchId = :batch, rounds = if_not_exists(rounds, :zero) + :add REMOVE takenUntil',
        ExpressionAttributeNames: { '#kind': 'kind' },
        ExpressionAttributeValues: {
          ':due': Math.floor(dueAt),
          ':kind': 'batch',
          ':batch': batchId,
          ':zero': 0,
          ...(change.restart ? {} : { ':add': change.round ? 1 : 0 }),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return { rounds: Number(answer.Attributes?.rounds ?? 0), ends: Number(answer.Attributes?.ends ?? 0) };
  }

  /**
   * A job of the batch ended. `woken`: its entry was held by no driver and no wake-up was on its
   * way, and it is now due (the caller invokes the ingest function). `noted`: a driver holds it, or a
   * wake-up is on its way; the end is counted, and the holder drives the batch again if it ended
   * during its round. `none`: the batch is not in the schedule (settled, or driven elsewhere).
   */
  async wake(batchId: string, now: number): Promise<BatchWake> {
    const Key = { PK: ingestDuePartition, SK: batchEntryId(batchId) };
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key,
          UpdateExpression: 'SET dueAt = :now, wokenAt = :now ADD ends :one',
          ConditionExpression:
            'attribute_exists(PK) AND (attribute_not_exists(takenUntil) OR takenUntil < :now) AND ' +
            '(attribute_not_exists(wokenAt) OR wokenAt < :lost)',
          ExpressionAttributeValues: { ':now': now, ':one': 1, ':lost': now - WAKE_LOST_AFTER_MS },
        }),
      );
      return 'woken';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key,
          UpdateExpression: 'ADD ends :one',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':one': 1 },
        }),
      );
      return 'noted';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return 'none';
    }
  }

  /**
   * Claims one of `slots` driver slots until `until` for `holder`: its number, or undefined when
   * every slot is held by a driver whose lease has not ended.
   */
  async claimSlot(slots: number, holder: string, now: number, until: number): Promise<number | undefined> {
    for (let slot = 0; slot < slots; slot++) {
      try {
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { PK: slotPartition, SK: String(slot) },
            UpdateExpression: 'SET #until = :until, holder = :holder',
            ConditionExpression: 'attribute_not_exists(#until) OR #until < :now',
            ExpressionAttributeNames: { '#until': 'until' },
            ExpressionAttributeValues: { ':until': until, ':holder': holder, ':now': now },
          }),
        );
        return slot;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    return undefined;
  }

  /** Gives a slot back (only if `holder` still holds it). */
  async releaseSlot(slot: number, holder: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { PK: slotPartition, SK: String(slot) },
          UpdateExpression: 'REMOVE #until, holder',
          ConditionExpression: 'holder = :holder',
          ExpressionAttributeNames: { '#until': 'until' },
          ExpressionAttributeValues: { ':holder': holder },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

function entryOf(item: Record<string, unknown>): IngestEntry | undefined {
  const id = String(item.SK);
  const dueAt = Number(item.dueAt);
  if (item.kind === 'upload' && typeof item.bucket === 'string' && typeof item.key === 'string')
    return {
      kind: 'upload',
      id,
      dueAt,
      upload: {
        bucket: item.bucket,
        key: item.key,
        etag: typeof item.etag === 'string' ? item.etag : undefined,
      },
    };
  if (item.kind === 'batch' && typeof item.batchId === 'string')
    return {
      kind: 'batch',
      id,
      dueAt,
      batchId: item.batchId,
      rounds: Number(item.rounds ?? 0),
      ends: Number(item.ends ?? 0),
    };
  return undefined;
}
