/**
 * The record of incoming webhook deliveries (shared/engine/webhook-deliveries.ts) on the job
 * table: items `HOOKLOG` / `D#<ULID>` (one partition, newest first by query; webhooks are throttled
 * per source far below a partition's write limit), each with the table's TTL attribute (30 days).
 * A source or tenant filter reads pages of the partition, so a filtered page may hold fewer than
 * `limit` and still have a cursor.
 */
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  defaultDeliveryRetentionMs,
  type WebhookDelivery,
  type WebhookDeliveryLog,
  type WebhookDeliveryQuery,
} from '../../engine/webhook-deliveries';
import { AwsConfigError, InvalidCursorError } from './errors';
import { ttlAttribute } from './table';

export const deliveryPartition = 'HOOKLOG';
const cursorPattern = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export class DynamoDbWebhookDeliveries implements WebhookDeliveryLog {
  constructor(
    private readonly options: {
      client: DynamoDBDocumentClient;
      tableName: string;
      retentionMs?: number | undefined;
    },
  ) {
    if (!options.tableName) throw new AwsConfigError('DynamoDbWebhookDeliveries needs a table name');
  }

  async record(delivery: WebhookDelivery): Promise<void> {
    await this.options.client.send(
      new PutCommand({
        TableName: this.options.tableName,
        Item: {
          PK: deliveryPartition,
          SK: `D#${delivery.id}`,
          source: delivery.source,
          tenant: delivery.tenant,
          delivery: JSON.stringify(delivery),
          [ttlAttribute]: Math.ceil(
            (delivery.at + (this.options.retentionMs ?? defaultDeliveryRetentionMs)) / 1000,
          ),
        },
      }),
    );
  }

  async list(
    query: WebhookDeliveryQuery,
  ): Promise<{ deliveries: WebhookDelivery[]; cursor?: string | undefined }> {
    if (query.cursor !== undefined && !cursorPattern.test(query.cursor))
      throw new InvalidCursorError('cursor is not one this log produced');
    const filters: string[] = [];
    const values: Record<string, unknown> = { ':pk': deliveryPartition, ':d': 'D#' };
    if (query.source !== undefined) {
      filters.push('#source = :source');
      values[':source'] = query.source;
    }
    if (query.tenant !== undefined) {
      filters.push('tenant = :tenant');
      values[':tenant'] = query.tenant;
    }
    const page = await this.options.client.send(
      new QueryCommand({
        TableName: this.options.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :d)',
        ...(filters.length > 0
          ? {
              FilterExpression: filters.join(' AND '),
              ...(query.source !== undefined ? { ExpressionAttributeNames: { '#source': 'source' } } : {}),
            }
          : {}),
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        Limit: query.limit,
        ...(query.cursor === undefined
          ? {}
          : { ExclusiveStartKey: { PK: deliveryPartition, SK: `D#${query.cursor}` } }),
      }),
    );
    const deliveries = (page.Items ?? []).map((item) => JSON.parse(String(item.delivery)) as WebhookDelivery);
    const last = page.LastEvaluatedKey?.SK;
    return { deliveries, cursor: typeof last === 'string' ? last.slice(2) : undefined };
  }
}
