/**
 * The change log of the aws backend, kept in the job table: what `GET /events` answers there. The
 * table's stream (NEW_AND_OLD_IMAGES) is read by the events function, which turns each new version
 * of a job into a change item of two partitions per hour, its tenant's (`EVT#<tenant>#<hour>`) and
 * everyone's (`EVT#*#<hour>`, an operator's), with a TTL of a day. A reader asks for the changes
 * after a cursor (the sort key of the last one it was given).
 *
 * Order. A stream is ordered per item only, and its shards are read by concurrent invocations, so
 * the writer stamps each change with its own clock when it writes it, and a reader answers only the
 * changes stamped at least `settleMs` ago. A write in flight is never passed by a cursor: before it
 * takes its stamp, a writer puts a marker (`EVT#writing`) that it removes once its changes are
 * written, and a reader answers nothing stamped after the oldest marker it finds (markers older than
 * `maxWriteMs` are a writer that died, and are passed over). So a slow write is written once and
 * read once. A write that fails removes what it wrote (no reader has passed it) before it is tried
 * again; only a write slower than `maxWriteMs`, or one that fails and cannot clean up, may reach a
 * reader twice (the long poll drops a change it already gave in the same answer). A job's changes
 * keep their order: a stream shard is handed over in order and one invocation's changes share a
 * stamp, ordered by their stream sequence numbers. The step worker appends a streamed answer's
 * parts itself (`answer` changes, dynamodb-partial-answers.ts).
 */

import { randomUUID } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Change } from '../../engine/change-feed';
import type { AnswerPart } from '../../engine/partial-answer';
import { changePartition, sortableTime, ttlAttribute } from './table';

/** A job's change as the stream tells it, before it has a place in the log. */
export type StreamChange = Omit<Change, 'seq'> & {
  /** The stream record's sequence number (decimal digits): orders one shard's records. */
  sequence: string;
};

/** A change read back from the log; `cursor` is what a reader resumes after. */
export type LoggedChange = Omit<Change, 'seq'> & { cursor: string };

/** A stream record of the job table, as Lambda hands it (the part read here). */
export interface JobStreamRecord {
  eventName?: string | undefined;
  dynamodb?:
    | {
        SequenceNumber?: string | undefined;
        NewImage?: Record<string, unknown> | undefined;
        OldImage?: Record<string, unknown> | undefined;
      }
    | undefined;
}

/** How long change items are kept (their TTL), and how far back a reader may resume: a day. */
export const changeRetentionMs = 24 * 60 * 60 * 1000;
/** A change is answered once it was stamped this long ago (writes in flight land first). */
export const defaultChangeSettleMs = 1_000;
/** The partition of every tenant's changes (a tenant name never holds `*`). */
export const allTenants = '*';

const cursorPattern = /^(\d{13})-(\d{1,40}|z)$/;

/** Whether `text` is a cursor of this log. */
export function isChangeCursor(text: string): boolean {
  return cursorPattern.test(text);
}

function sortKey(ms: number, sequence: string): string {
  return `${sortableTime(ms)}#${sequence === 'z' ? 'z' : sequence.padStart(40, '0')}`;
}

function cursorOfSortKey(key: string): string {
  const [time, sequence] = key.split('#') as [string, string];
  return `${time}-${sequence === 'z' ? 'z' : sequence.replace(/^0+(?=\d)/, '')}`;
}

function sortKeyOfCursor(cursor: string): { key: string; ms: number } {
  const match = cursorPattern.exec(cursor);
  if (!match) throw new Error(`${cursor} is not a cursor of the change log`);
  return { key: sortKey(Number(match[1]), match[2]!), ms: Number(match[1]) };
}

/** The cursor of "everything stamped up to `ms` has been read". */
export function cursorAt(ms: number): string {
  return `${sortableTime(ms)}-z`;
}

type Image = Record<string, unknown>;

function jobOfImage(image: Record<string, unknown> | undefined): Image | undefined {
  if (image === undefined) return undefined;
  const item = unmarshall(image as Record<string, AttributeValue>);
  if (typeof item.PK !== 'string' || !item.PK.startsWith('JOB#') || item.SK !== 'JOB') return undefined;
  if (typeof item.job !== 'string') return undefined;
  try {
    return JSON.parse(item.job) as Image;
  } catch {
    return undefined;
  }
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * The change a stream record of the job table is: a job created, or written at a new version.
 * Undefined for anything else (other items, a removal by TTL, a write that kept the version).
 */
export function changeOfStreamRecord(record: JobStreamRecord): StreamChange | undefined {
  if (record.eventName !== 'INSERT' && record.eventName !== 'MODIFY') return undefined;
  const job = jobOfImage(record.dynamodb?.NewImage);
  const sequence = record.dynamodb?.SequenceNumber;
  if (job === undefined || sequence === undefined || !/^\d{1,40}$/.test(sequence)) return undefined;
  const before = jobOfImage(record.dynamodb?.OldImage);
  if (before !== undefined && before.version === job.version) return undefined;
  const id = text(job.id);
  const tenant = text(job.tenant);
  const status = text(job.status);
  if (id === undefined || tenant === undefined || status === undefined || typeof job.version !== 'number')
    return undefined;
  return {
    sequence,
    kind: 'job',
    id,
    tenant,
    batchId: text(job.batchId),
    workflow: text(job.workflow),
    status,
    step: text(job.step),
    version: job.version,
    previousStatus: text(before?.status),
    previousStep: text(before?.step),
    at: typeof job.updatedAt === 'number' ? job.updatedAt : Date.now(),
  };
}

export interface DynamoDbChangeLogOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Default: the wall clock. */
  now?: (() => number) | undefined;
  /** Default {@link defaultChangeSettleMs}. */
  settleMs?: number | undefined;
  /** Default {@link defaultMaxWriteMs}. */
  maxWriteMs?: number | undefined;
}

/** What a read of the log found: the changes after the cursor, and where the next read starts. */
export interface ChangePage {
  changes: LoggedChange[];
  cursor: string;
  /** The cursor was older than what is kept: changes may be lost, read the state again. */
  reset: boolean;
}

/**
 * A write's marker older than this is a writer that died (a Lambda timed out mid-write): readers
 * pass it over. Default 30 s, the events function's timeout.
 */
export const defaultMaxWriteMs = 30_000;
/** The partition of the markers of writes in flight (under `EVT#`: the events function may write it). */
export const writingPartition = 'EVT#writing';

const hourMs = 60 * 60 * 1000;
const batchWriteLimit = 25;

type WriteRequest =
  | { PutRequest: { Item: Record<string, unknown> } }
  | { DeleteRequest: { Key: Record<string, unknown> } };

export class DynamoDbChangeLog {
  private readonly now: () => number;
  private readonly settleMs: number;
  private readonly maxWriteMs: number;

  constructor(private readonly options: DynamoDbChangeLogOptions) {
    this.now = options.now ?? Date.now;
    this.settleMs = options.settleMs ?? defaultChangeSettleMs;
    this.maxWriteMs = options.maxWriteMs ?? defaultMaxWriteMs;
  }

  /**
   * Writes the changes (in stream order) into their tenant's partition and everyone's, under a
   * marker that holds readers back until they are all written. A failure removes what was written
   * and throws (the caller tries again).
   */
  async append(changes: readonly StreamChange[]): Promise<void> {
    if (changes.length === 0) return;
    for (;;) {
      const since = this.now();
      const marker = { PK: writingPartition, SK: `${sortableTime(since)}#${randomUUID()}` };
      await this.batchWrite([
        { PutRequest: { Item: { ...marker, [ttlAttribute]: Math.ceil((since + hourMs) / 1000) } } },
      ]);
      // Stamped once the marker is in: a reader that missed the marker reads before the stamp.
      const stamp = this.now();
      const items = this.itemsOf(changes, stamp);
      try {
        await this.batchWrite(items.map((Item) => ({ PutRequest: { Item } })));
      } catch (error) {
        // No reader passed the marker: what was written is taken back, then the marker. When that
        // fails too, the marker stays until readers pass it over (maxWriteMs).
        await this.batchWrite(items.map(({ PK, SK }) => ({ DeleteRequest: { Key: { PK, SK } } })))
          .then(() => this.batchWrite([{ DeleteRequest: { Key: marker } }]))
          .catch(() => undefined);
        throw error;
      }
      await this.batchWrite([{ DeleteRequest: { Key: marker } }]);
      // Slower than readers wait for a marker: one may have passed the stamp. Written again, later.
      if (this.now() - since <= this.maxWriteMs - this.settleMs) return;
    }
  }

  private itemsOf(changes: readonly StreamChange[], stamp: number): Record<string, unknown>[] {
    const expiresAt = Math.ceil((stamp + changeRetentionMs) / 1000);
    return changes.flatMap((change) => {
      const { sequence, ...rest } = change;
      const body = { ...rest, SK: sortKey(stamp, sequence), [ttlAttribute]: expiresAt };
      return [
        { ...body, PK: changePartition(change.tenant, stamp) },
        { ...body, PK: changePartition(allTenants, stamp) },
      ];
    });
  }

  private async batchWrite(all: readonly WriteRequest[]): Promise<void> {
    let requests = [...all];
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
      const unprocessed: WriteRequest[] = [];
      for (let from = 0; from < requests.length; from += batchWriteLimit) {
        const answer = await this.options.client.send(
          new BatchWriteCommand({
            RequestItems: { [this.options.tableName]: requests.slice(from, from + batchWriteLimit) },
          }),
        );
        unprocessed.push(...((answer.UnprocessedItems?.[this.options.tableName] ?? []) as WriteRequest[]));
      }
      requests = unprocessed;
    }
  }

  /**
   * The last instant a reader may answer now: settled, and before the oldest write in flight. Read
   * before the markers are: a write whose marker lands after that read is stamped after it.
   */
  private async visibleUntil(): Promise<number> {
    const now = this.now();
    const writing = await this.options.client.send(
      new QueryCommand({
        TableName: this.options.tableName,
        KeyConditionExpression: 'PK = :pk AND SK >= :live',
        ExpressionAttributeValues: { ':pk': writingPartition, ':live': sortableTime(now - this.maxWriteMs) },
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    const oldest = writing.Items?.[0]?.SK;
    const settled = now - this.settleMs;
    return typeof oldest === 'string' ? Math.min(settled, Number(oldest.slice(0, 13)) - 1) : settled;
  }

  /** Where a reader starting now begins: after everything already answerable. */
  async head(): Promise<string> {
    return cursorAt(await this.visibleUntil());
  }

  /**
   * The changes of `tenant` (every tenant's when undefined) after `cursor`, oldest first, at most
   * `limit` of them; a cursor older than a day is answered `reset` with the head.
   */
  async after(tenant: string | undefined, cursor: string, limit: number): Promise<ChangePage> {
    const from = sortKeyOfCursor(cursor);
    if (from.ms < this.now() - changeRetentionMs)
      return { changes: [], cursor: await this.head(), reset: true };
    const visibleUntil = await this.visibleUntil();
    const until = sortKey(visibleUntil, 'z');
    const changes: LoggedChange[] = [];
    for (let hour = Math.floor(from.ms / hourMs) * hourMs; hour <= visibleUntil; hour += hourMs) {
      const answer = await this.options.client.send(
        new QueryCommand({
          TableName: this.options.tableName,
          KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :until',
          ExpressionAttributeValues: {
            ':pk': changePartition(tenant ?? allTenants, hour),
            ':from': from.key,
            ':until': until,
          },
          // A write acknowledged before its marker went is read, not an older copy of the partition.
          ConsistentRead: true,
          Limit: limit + 1,
        }),
      );
      for (const item of answer.Items ?? []) {
        if (item.SK === from.key) continue;
        changes.push(loggedChange(item));
        if (changes.length === limit) return { changes, cursor: changes[limit - 1]!.cursor, reset: false };
      }
      // A page cut by DynamoDB's 1 MB: the next read goes on from its last change.
      if (answer.LastEvaluatedKey !== undefined && changes.length > 0)
        return { changes, cursor: changes[changes.length - 1]!.cursor, reset: false };
    }
    return { changes, cursor: from.key > until ? cursor : cursorOfSortKey(until), reset: false };
  }
}

function loggedChange(item: Record<string, unknown>): LoggedChange {
  const optional = (name: string) => (typeof item[name] === 'string' ? (item[name] as string) : undefined);
  const answer = item.kind === 'answer' ? answerPartOf(item.answer) : undefined;
  return {
    cursor: cursorOfSortKey(String(item.SK)),
    kind: answer === undefined ? 'job' : 'answer',
    id: String(item.id),
    tenant: String(item.tenant),
    batchId: optional('batchId'),
    workflow: optional('workflow'),
    status: String(item.status),
    step: optional('step'),
    version: Number(item.version),
    previousStatus: optional('previousStatus'),
    previousStep: optional('previousStep'),
    at: Number(item.at),
    answer,
  };
}

/** A streamed answer's part as an `answer` change item holds it (dynamodb-partial-answers.ts). */
function answerPartOf(value: unknown): AnswerPart | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { step, offset, text } = value as Record<string, unknown>;
  return typeof step === 'string' && typeof offset === 'number' && typeof text === 'string'
    ? { step, offset, text }
    : undefined;
}
