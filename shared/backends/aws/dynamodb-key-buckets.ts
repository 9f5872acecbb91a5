/**
 * Which rate bucket each tenant's API key draws from, kept in the job table (`KEYOF#<tenant>`): the
 * step worker, which reads the keys, records each tenant's bucket as it reads its key (`watch`);
 * the api, which never reads a key, finds the bucket there to take a new job's first token
 * (engine/first-message.ts). Only the key's fingerprint is stored (as in the bucket's own
 * `RATE#` key), never the key.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keyFingerprint } from '../../engine/admission/rate-bucket';
import type { KeyBuckets } from '../../engine/first-message';
import type { KeySource } from '../../engine/ports';
import { errorMessage } from '../../errors/error-message';
import type { Logger } from '../../log/logger';
import { tenantBucketKey } from './table';

export interface DynamoDbKeyBucketsOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** How long a tenant's bucket read is reused (default 60 s): a rotated key is seen this late. */
  cacheMs?: number | undefined;
  /** Default: the wall clock. */
  now?: (() => number) | undefined;
}

export class DynamoDbKeyBuckets implements KeyBuckets {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly cacheMs: number;
  private readonly now: () => number;
  /** What this instance read or wrote per tenant, and when. */
  private readonly known = new Map<string, { bucket: string | undefined; at: number }>();

  constructor(options: DynamoDbKeyBucketsOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.cacheMs = options.cacheMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** The tenant's bucket as last recorded (read once per `cacheMs`); undefined when none is. */
  async bucketOf(tenant: string): Promise<string | undefined> {
    const known = this.known.get(tenant);
    if (known && this.now() - known.at < this.cacheMs) return known.bucket;
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: tenantBucketKey(tenant) }),
    );
    const bucket = typeof Item?.bucket === 'string' ? Item.bucket : undefined;
    this.known.set(tenant, { bucket, at: this.now() });
    return bucket;
  }

  /**
   * Records the tenant's bucket: once per instance while it stays the same, and written only when
   * the table holds another (a read, then a write at a key's first use or after it changed).
   */
  async record(tenant: string, bucket: string): Promise<void> {
    const known = this.known.get(tenant);
    if (known?.bucket === bucket && known.at === Number.POSITIVE_INFINITY) return;
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: tenantBucketKey(tenant) }),
    );
    if (Item?.bucket !== bucket) {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...tenantBucketKey(tenant), bucket, updatedAt: this.now() },
        }),
      );
    }
    // Recorded by this instance: its own reads need not ask the table again.
    this.known.set(tenant, { bucket, at: Number.POSITIVE_INFINITY });
  }

  /**
   * The key source with each tenant's bucket recorded as its key is read. Recording is best effort:
   * a failure is logged and the key is returned all the same (the api then sends new jobs' first
   * messages without a token, as before).
   */
  watch(keys: KeySource, log?: Logger): KeySource {
    const recorded = async (tenant: string, key: string | undefined) => {
      if (key === undefined) return key;
      try {
        await this.record(tenant, keyFingerprint(key));
      } catch (error) {
        log?.warn("could not record the tenant's rate bucket; new jobs' first messages go without a token", {
          tenant,
          error: errorMessage(error),
        });
      }
      return key;
    };
    return {
      getKey: async (tenant) => recorded(tenant, await keys.getKey(tenant)),
      refresh: async (tenant) => recorded(tenant, await keys.refresh(tenant)),
    };
  }
}
