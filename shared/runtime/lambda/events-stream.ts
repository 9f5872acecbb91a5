/**
 * The events function's logic, behind the job table's stream (DynamoDB Streams, NEW_AND_OLD_IMAGES):
 * each new version of a job becomes a change item of the change log (dynamodb-change-log.ts), which
 * `GET /events` answers as a long poll. It runs only when the table is written, and only for job
 * items: the event source mapping's filter drops every other record before an invocation. It builds
 * a DynamoDB client and nothing else.
 */
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { awsClientConfig, createDynamoDbClients } from '../../backends/aws/clients';
import {
  changeOfStreamRecord,
  DynamoDbChangeLog,
  type StreamChange,
} from '../../backends/aws/dynamodb-change-log';
import { loadAwsConfig } from '../aws/config';
import { createObservability, type Observability } from './observability';

export interface EventsStreamOptions {
  log: Pick<DynamoDbChangeLog, 'append'>;
  observability: Observability;
}

export interface EventsStream {
  /** The Lambda handler: the changes the batch held. A failure throws: Lambda retries the batch, in order. */
  handle(event: DynamoDBStreamEvent, context: Context): Promise<{ changes: number }>;
}

export function createEventsStream(options: EventsStreamOptions): EventsStream {
  const { logger } = options.observability;
  return {
    async handle(event, context) {
      logger.addContext(context);
      const changes = event.Records.map(changeOfStreamRecord).filter(
        (change): change is StreamChange => change !== undefined,
      );
      await options.log.append(changes);
      logger.info('changes logged', { records: event.Records.length, changes: changes.length });
      return { changes: changes.length };
    },
  };
}

/** What the events function builds once per instance, from `env` (default `process.env`). */
export function createEventsStreamRuntime(
  env: Readonly<Record<string, string | undefined>> = process.env,
): EventsStreamOptions {
  const config = loadAwsConfig(env);
  const { documents } = createDynamoDbClients(awsClientConfig(config));
  return {
    log: new DynamoDbChangeLog({ client: documents, tableName: config.tableName }),
    observability: createObservability(),
  };
}
