/**
 * Learned poll timing on DynamoDB: one `POLLSTAT#<key>` item per operation and base URL (the key
 * holds only a hash of the URL), shared by every Lambda. Each record is a read and a Put
 * conditioned on the `seq` read, so concurrent workers never lose each other's task.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { PollStatsStore } from '../../engine/poll-stats';
import {
  type DurationSketch,
  durationSketchSchema,
  emptySketch,
  recordDuration,
} from '../../engine/poll-timing';
import { AwsConfigError } from './errors';

export function pollStatsItemKey(key: string): { PK: string; SK: string } {
  return { PK: `POLLSTAT#${key}`, SK: 'SKETCH' };
}

export interface DynamoDbPollStatsOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Read-and-write rounds a record may lose to other workers before it is dropped (default 20). */
  maxContention?: number | undefined;
  /** Sketches not updated for this long are removed by TTL (default 30 days). */
  idleSeconds?: number | undefined;
  /** Spreads the next try of a record that lost to another worker. Default: `Math.random`. */
  random?: (() => number) | undefined;
  /** Waits before that next try. Default: a timer. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

export class DynamoDbPollStats implements PollStatsStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly maxContention: number;
  private readonly idleSeconds: number;
  private readonly random: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: DynamoDbPollStatsOptions) {
    if (!options.tableName) throw new AwsConfigError('DynamoDbPollStats needs a table name');
    this.client = options.client;
    this.tableName = options.tableName;
    this.maxContention = options.maxContention ?? 20;
    this.idleSeconds = options.idleSeconds ?? 30 * 24 * 3600;
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async load(keys: readonly string[]): Promise<Map<string, DurationSketch>> {
    const answer = new Map<string, DurationSketch>();
    const unique = [...new Set(keys)];
    for (let start = 0; start < unique.length; start += 100) {
      let pending: Record<string, unknown>[] = unique.slice(start, start + 100).map(pollStatsItemKey);
      for (let attempt = 0; pending.length > 0 && attempt < 5; attempt++) {
        const result = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: pending } } }),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) {
          const sketch = parseSketch(item.sketch);
          if (sketch) answer.set(String(item.PK).slice('POLLSTAT#'.length), sketch);
        }
        pending = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return answer;
  }

  async record(key: string, lowerMs: number, upperMs: number, now: number): Promise<void> {
    const itemKey = pollStatsItemKey(key);
    for (let round = 0; round < this.maxContention; round++) {
      const read = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: itemKey, ConsistentRead: true }),
      );
      const seq = typeof read.Item?.seq === 'number' ? read.Item.seq : undefined;
      const sketch = parseSketch(read.Item?.sketch) ?? emptySketch(now);
      const next = recordDuration(sketch, lowerMs, upperMs, now);
      try {
        await this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              ...itemKey,
              sketch: JSON.stringify(next),
              seq: (seq ?? 0) + 1,
              expiresAt: Math.floor(now / 1000) + this.idleSeconds,
            },
            ...(seq === undefined
              ? { ConditionExpression: 'attribute_not_exists(seq)' }
              : { ConditionExpression: 'seq = :seq', ExpressionAttributeValues: { ':seq': seq } }),
          }),
        );
        return;
      } catch (error) {
        const lost =
          error instanceof ConditionalCheckFailedException ||
          (error as { name?: string }).name === 'ConditionalCheckFailedException';
        if (!lost) throw error;
        // Many workers finished tasks of one operation together: spread their next tries.
        await this.sleep(this.random() * 10 * (round + 1));
      }
    }
  }
}

function parseSketch(value: unknown): DurationSketch | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const parsed = durationSketchSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
