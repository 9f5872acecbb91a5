/**
 * Drives a function the way Lambda's DynamoDB Streams event source does, on DynamoDB Local's stream
 * of a table: each shard is read in order from TRIM_HORIZON (or LATEST), its records are filtered by
 * the event source mapping's filter criteria (a record no pattern matches is dropped without an
 * invocation, as Lambda does), and each batch of up to `batchSize` records is handed to the handler.
 * A shard's next batch waits for the previous one: a batch that throws, or names failed records
 * (ReportBatchItemFailures), is invoked again from the first failed record, so a shard's records are
 * never skipped nor reordered. Nothing polls when nobody writes: `drain()` reads what is there.
 *
 * DynamoDB Local serves the streams API (`DynamoDBStreams_20120810`) on its own endpoint; the SDK's
 * streams client is not a dependency, so its four calls are made here. DynamoDB Local reads the
 * access key of the Authorization header (its tables are per key and region) and checks no signature.
 */
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { lambdaContext } from './lambda-events';

export type StreamHandler = (
  event: DynamoDBStreamEvent,
  context: Context,
) => Promise<DynamoDBBatchResponse | undefined>;

/** One pattern of an event source mapping's `FilterCriteria` (the subset opflow uses: prefix and equality). */
export type FilterPattern = Record<string, unknown>;

export interface DynamoDbStreamSourceOptions {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string };
  tableName: string;
  /** Records per invocation (default 100, Lambda's default for streams). */
  batchSize?: number | undefined;
  /** The mapping's filter patterns (JSON objects, as in the template); none: every record. */
  filters?: readonly FilterPattern[] | undefined;
  functionName?: string | undefined;
  functionTimeoutMs?: number | undefined;
}

interface ShardState {
  id: string;
  iterator: string | undefined;
  /** Where the first iterator was taken. */
  from: 'TRIM_HORIZON' | 'LATEST';
  /** The sequence number of the last record read from the shard (none read yet: undefined). */
  lastSequence: string | undefined;
  /** Records read but not yet handled (a failed batch is retried from its first failed record). */
  pending: DynamoDBRecord[];
}

/** Whether `value` matches an EventBridge-style pattern value (a list of alternatives). */
function matchesValue(pattern: unknown, value: unknown): boolean {
  if (Array.isArray(pattern))
    return pattern.some((alternative) => {
      if (alternative !== null && typeof alternative === 'object' && 'prefix' in alternative)
        return typeof value === 'string' && value.startsWith(String(alternative.prefix));
      return alternative === value;
    });
  if (pattern !== null && typeof pattern === 'object') {
    if (value === null || typeof value !== 'object') return false;
    return Object.entries(pattern).every(([key, inner]) =>
      matchesValue(inner, (value as Record<string, unknown>)[key]),
    );
  }
  return false;
}

/** Whether a record passes the mapping's filters (any one pattern suffices; none: every record). */
export function recordPasses(record: DynamoDBRecord, filters: readonly FilterPattern[] | undefined): boolean {
  if (filters === undefined || filters.length === 0) return true;
  return filters.some((pattern) => matchesValue(pattern, record));
}

export class DynamoDbStreamSource {
  /** Records handed to the handler, and the invocations, so far. */
  delivered = 0;
  invocations = 0;
  /** Records the filters dropped without an invocation. */
  filtered = 0;
  private readonly shards = new Map<string, ShardState>();
  private streamArn: string | undefined;

  constructor(private readonly options: DynamoDbStreamSourceOptions) {}

  private async call<T>(target: string, body: Record<string, unknown>): Promise<T> {
    const { accessKeyId } = this.options.credentials;
    const scope = `${accessKeyId}/20260101/${this.options.region}/dynamodb/aws4_request`;
    const response = await fetch(this.options.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': target,
        authorization: `AWS4-HMAC-SHA256 Credential=${scope}, SignedHeaders=host, Signature=${'0'.repeat(64)}`,
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${target}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }

  /** Finds the table's stream and opens an iterator on each of its shards (`LATEST`: only what follows). */
  async start(from: 'TRIM_HORIZON' | 'LATEST' = 'TRIM_HORIZON'): Promise<void> {
    const table = await this.call<{ Table: { LatestStreamArn?: string } }>(
      'DynamoDB_20120810.DescribeTable',
      {
        TableName: this.options.tableName,
      },
    );
    const arn = table.Table.LatestStreamArn;
    if (arn === undefined) throw new Error(`table ${this.options.tableName} has no stream`);
    this.streamArn = arn;
    await this.openShards(from);
  }

  private async openShards(from: 'TRIM_HORIZON' | 'LATEST'): Promise<void> {
    const described = await this.call<{ StreamDescription: { Shards: { ShardId: string }[] } }>(
      'DynamoDBStreams_20120810.DescribeStream',
      { StreamArn: this.streamArn },
    );
    for (const shard of described.StreamDescription.Shards) {
      if (this.shards.has(shard.ShardId)) continue;
      const { ShardIterator } = await this.call<{ ShardIterator?: string }>(
        'DynamoDBStreams_20120810.GetShardIterator',
        { StreamArn: this.streamArn, ShardId: shard.ShardId, ShardIteratorType: from },
      );
      this.shards.set(shard.ShardId, {
        id: shard.ShardId,
        iterator: ShardIterator,
        from,
        lastSequence: undefined,
        pending: [],
      });
    }
  }

  /**
   * Reads every shard to its end and invokes `handler` with its records in order, batch by batch;
   * returns the records delivered. A batch that fails is kept and invoked again on the next drain.
   */
  async drain(handler: StreamHandler): Promise<number> {
    if (this.streamArn === undefined) throw new Error('start() the stream source first');
    await this.openShards('TRIM_HORIZON');
    let delivered = 0;
    for (const shard of this.shards.values()) {
      while (shard.iterator !== undefined) {
        const page = await this.getRecords(shard);
        const records = (page.Records ?? []).map((record) => ({
          ...record,
          eventSourceARN: this.streamArn,
        }));
        for (const record of records) {
          shard.lastSequence = record.dynamodb?.SequenceNumber ?? shard.lastSequence;
          if (recordPasses(record, this.options.filters)) shard.pending.push(record);
          else this.filtered += 1;
        }
        // An open shard answers an empty page at its end, with an iterator for what comes later.
        const end = records.length === 0;
        shard.iterator = page.NextShardIterator;
        if (end) break;
      }
      delivered += await this.invokeShard(shard, handler);
    }
    return delivered;
  }

  /**
   * One page of a shard. DynamoDB Local answers TrimmedDataAccessException for an iterator taken on
   * a shard that was still empty once any table of the same DynamoDB Local has been written to since
   * (aws/aws-sdk-java#2923; its sequence numbers are global), though nothing was trimmed: the
   * iterator is taken again where this source stands (after the last record read, or at the trim
   * horizon when none was read from a shard read from its start), so no record is skipped nor read
   * twice. (A shard opened at LATEST that has given nothing yet has no such place: the error stands.)
   */
  private async getRecords(
    shard: ShardState,
  ): Promise<{ Records?: DynamoDBRecord[]; NextShardIterator?: string }> {
    const read = () =>
      this.call<{ Records?: DynamoDBRecord[]; NextShardIterator?: string }>(
        'DynamoDBStreams_20120810.GetRecords',
        { ShardIterator: shard.iterator, Limit: 1000 },
      );
    try {
      return await read();
    } catch (error) {
      const trimmed = error instanceof Error && error.message.includes('TrimmedDataAccessException');
      if (!trimmed || (shard.lastSequence === undefined && shard.from === 'LATEST')) throw error;
      const { ShardIterator } = await this.call<{ ShardIterator?: string }>(
        'DynamoDBStreams_20120810.GetShardIterator',
        shard.lastSequence === undefined
          ? { StreamArn: this.streamArn, ShardId: shard.id, ShardIteratorType: 'TRIM_HORIZON' }
          : {
              StreamArn: this.streamArn,
              ShardId: shard.id,
              ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
              SequenceNumber: shard.lastSequence,
            },
      );
      shard.iterator = ShardIterator;
      return read();
    }
  }

  private async invokeShard(shard: ShardState, handler: StreamHandler): Promise<number> {
    const batchSize = this.options.batchSize ?? 100;
    let delivered = 0;
    while (shard.pending.length > 0) {
      const batch = shard.pending.slice(0, batchSize);
      this.invocations += 1;
      let failedFrom: number;
      try {
        const answer = await handler(
          { Records: batch },
          lambdaContext(
            this.options.functionName ?? 'opflow-events',
            this.options.functionTimeoutMs ?? 60_000,
          ),
        );
        const failed = new Set((answer?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
        failedFrom = batch.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber ?? ''));
      } catch {
        failedFrom = 0;
      }
      const done = failedFrom === -1 ? batch.length : failedFrom;
      shard.pending.splice(0, done);
      delivered += done;
      this.delivered += done;
      // Lambda retries a shard's failed batch before anything after it: so does the next drain.
      if (failedFrom !== -1) break;
    }
    return delivered;
  }
}
