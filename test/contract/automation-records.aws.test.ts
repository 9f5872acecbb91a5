// The job history (HIST#), webhook delivery record (HOOKLOG) and schedule state (SCHED#, with its
// run-time pause) contracts on DynamoDB Local, a fresh table per test; and the items' TTL, which
// keeps the history and the record bounded on aws without a sweep.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../scripts/emulators/aws-emulators';
import { DynamoDbJobHistory, historyItemKey } from '../../shared/backends/aws/dynamodb-job-history';
import { DynamoDbScheduleStateStore } from '../../shared/backends/aws/dynamodb-schedule-state-store';
import {
  DynamoDbWebhookDeliveries,
  deliveryPartition,
} from '../../shared/backends/aws/dynamodb-webhook-deliveries';
import { ttlAttribute } from '../../shared/backends/aws/table';
import { defaultHistoryRetentionMs } from '../../shared/engine/history';
import { defaultDeliveryRetentionMs } from '../../shared/engine/webhook-deliveries';
import { makeJob } from '../support/factories';
import {
  describeJobHistoryContract,
  describeScheduleStateContract,
  describeWebhookDeliveriesContract,
} from './automation-records.contract';

let emulators: AwsEmulators;
beforeAll(async () => {
  emulators = await startAwsEmulators({ secretsManager: false });
});
afterAll(async () => {
  await emulators?.stop();
});

const documents = () => emulators.clients.documents;

describeJobHistoryContract('DynamoDbJobHistory', async () => {
  const tableName = await emulators.createTable();
  return new DynamoDbJobHistory({
    client: documents(),
    tableName,
    onError: (error) => {
      throw error;
    },
  });
});
describeWebhookDeliveriesContract('DynamoDbWebhookDeliveries', async () => {
  const tableName = await emulators.createTable();
  return new DynamoDbWebhookDeliveries({ client: documents(), tableName });
});
describeScheduleStateContract('DynamoDbScheduleStateStore', async (names) => {
  const tableName = await emulators.createTable();
  return new DynamoDbScheduleStateStore(documents(), tableName, names);
});

describe('the aws records expire with the table TTL', () => {
  it('a HIST# event and a HOOKLOG delivery carry the TTL of their retention', async () => {
    const tableName = await emulators.createTable();
    const now = Date.now();
    const history = new DynamoDbJobHistory({ client: documents(), tableName });
    const job = makeJob({ createdAt: now, updatedAt: now });
    history.record(job);
    await history.flush();
    const event = await documents().send(
      new GetCommand({ TableName: tableName, Key: historyItemKey(job.id, job.version) }),
    );
    expect(event.Item?.[ttlAttribute]).toBe(Math.ceil((now + defaultHistoryRetentionMs) / 1000));

    const deliveries = new DynamoDbWebhookDeliveries({ client: documents(), tableName });
    const id = ulid(now);
    await deliveries.record({ id, source: 'tracker', at: now, status: 202, tenant: 'default' });
    const delivery = await documents().send(
      new GetCommand({ TableName: tableName, Key: { PK: deliveryPartition, SK: `D#${id}` } }),
    );
    expect(delivery.Item?.[ttlAttribute]).toBe(Math.ceil((now + defaultDeliveryRetentionMs) / 1000));
  });
});
