/**
 * The job history (shared/engine/history.ts) on the job table: one item per job version,
 * `HIST#<jobId>` / `V#<version, 10 digits>`, holding the event as JSON and the table's TTL
 * attribute (30 days after the event by default), so the history stays bounded without a sweep.
 * Written after the job's commit, like the local history: `record` starts the Put and `flush`
 * waits for every Put started (the Lambda handlers await it before they return, since a frozen
 * instance would otherwise drop them). A failed Put loses one event, never anything of the job.
 */
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  defaultHistoryRetentionMs,
  eventOf,
  historyEventLimit,
  type JobEvent,
  type JobHistory,
} from '../../engine/history';
import type { Job } from '../../engine/job-record';
import { queryItems } from './dynamodb-pages';
import { AwsConfigError } from './errors';
import { ttlAttribute } from './table';

export function historyItemKey(jobId: string, version: number): { PK: string; SK: string } {
  return { PK: `HIST#${jobId}`, SK: `V#${String(version).padStart(10, '0')}` };
}

export interface DynamoDbJobHistoryOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** How long an event is kept (default 30 days). */
  retentionMs?: number | undefined;
  /** Told about a Put that failed (the event is lost; the job is not). */
  onError?: ((error: unknown) => void) | undefined;
}

export class DynamoDbJobHistory implements JobHistory {
  private readonly pending = new Set<Promise<void>>();
  private readonly retentionMs: number;

  constructor(private readonly options: DynamoDbJobHistoryOptions) {
    if (!options.tableName) throw new AwsConfigError('DynamoDbJobHistory needs a table name');
    this.retentionMs = options.retentionMs ?? defaultHistoryRetentionMs;
  }

  record(job: Job): void {
    const event = eventOf(job);
    const write = this.options.client
      .send(
        new PutCommand({
          TableName: this.options.tableName,
          Item: {
            ...historyItemKey(job.id, job.version),
            event: JSON.stringify(event),
            [ttlAttribute]: Math.ceil((event.at + this.retentionMs) / 1000),
          },
          // A version already kept is left as it is (a repeated notification).
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      )
      .then(
        () => undefined,
        (error: unknown) => {
          if ((error as { name?: string }).name !== 'ConditionalCheckFailedException')
            this.options.onError?.(error);
        },
      )
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  async list(jobId: string): Promise<JobEvent[]> {
    // Newest first, up to the limit, then put back in order.
    const items = await queryItems(
      this.options.client,
      {
        TableName: this.options.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :v)',
        ExpressionAttributeValues: { ':pk': `HIST#${jobId}`, ':v': 'V#' },
        ScanIndexForward: false,
        Limit: historyEventLimit,
      },
      historyEventLimit,
    );
    return items.map((item) => JSON.parse(String(item.event)) as JobEvent).reverse();
  }

  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
