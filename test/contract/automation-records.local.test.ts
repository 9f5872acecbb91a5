// The job history, webhook delivery record and schedule state contracts on SQLite (a fresh
// in-memory database per test).
import { openLocalDatabase } from '../../shared/backends/local/database';
import { SqliteJobHistory } from '../../shared/backends/local/sqlite-job-history';
import { SqliteScheduleStateStore } from '../../shared/backends/local/sqlite-schedule-state-store';
import { SqliteWebhookDeliveries } from '../../shared/backends/local/sqlite-webhook-deliveries';
import {
  describeJobHistoryContract,
  describeScheduleStateContract,
  describeWebhookDeliveriesContract,
} from './automation-records.contract';

describeJobHistoryContract(
  'SqliteJobHistory',
  async () => new SqliteJobHistory(openLocalDatabase(':memory:')),
);
describeWebhookDeliveriesContract(
  'SqliteWebhookDeliveries',
  async () => new SqliteWebhookDeliveries(openLocalDatabase(':memory:')),
);
describeScheduleStateContract(
  'SqliteScheduleStateStore',
  async () => new SqliteScheduleStateStore(openLocalDatabase(':memory:')),
);
