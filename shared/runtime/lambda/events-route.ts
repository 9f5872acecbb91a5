/**
 * `GET /events` on the Lambda api: a long poll of the change log (dynamodb-change-log.ts), since the
 * HTTP API cannot stream. It answers the events after the caller's cursor (`Last-Event-ID` or
 * `?lastEventId=`) as JSON, waiting up to `?wait=` seconds (default and at most 20, and always 2 s
 * short of the invocation's time left) when there are none, and says the wait granted (`wait`, in
 * seconds). The caller authenticates as on every
 * route (API Gateway's IAM or JWT authorizer: a fetch sends its Authorization header, so no token
 * travels in a URL), and a caller bound to a tenant reads only its own changes.
 */

import { DynamoDbBatchStore } from '../../backends/aws/dynamodb-batch-store';
import { DynamoDbChangeLog, isChangeCursor } from '../../backends/aws/dynamodb-change-log';
import { DynamoDbPartialAnswers } from '../../backends/aws/dynamodb-partial-answers';
import { longPoll } from '../../http/events-long-poll';
import { filterOf } from '../../http/events-routes';
import { eventsQuerySchema } from '../../http/events-schemas';
import { ApiError, type ApiRoute, apiRoute, json, parse } from '../../http/job-api';
import { currentViewOf } from '../../ingest/batch-view';
import type { JobSide } from './jobs-runtime';

/** The longest wait of a long poll: under API Gateway's 30 s, with room for the answer. */
export const maxLongPollWaitMs = 20_000;
/** Kept free of the invocation's time left: the answer is written before the function's timeout. */
const answerMarginMs = 2_000;
/** Changes read per page of the log. */
const pageSize = 500;

export interface AwsEventsRouteOptions {
  /** Between two reads of the log while waiting. Default: 1 second. */
  pollMs?: number | undefined;
}

/** The `GET /events` route of the Lambda api. */
export function awsEventsRoutes(pipeline: JobSide, options: AwsEventsRouteOptions = {}): ApiRoute[] {
  const { documents } = pipeline.aws.clients;
  const { tableName } = pipeline.config;
  const { deps } = pipeline;
  const log = new DynamoDbChangeLog({ client: documents, tableName });
  const batches = new DynamoDbBatchStore({ client: documents, tableName });
  const answers = new DynamoDbPartialAnswers({ client: documents, tableName });
  return [
    apiRoute('events', async (_params, request, context) => {
      const query = parse(eventsQuerySchema, request.query ?? {}, 'query');
      if (query.token !== undefined)
        throw new ApiError(
          400,
          'invalid-request',
          "query.token: on AWS, GET /events is a long poll that takes the caller's own credentials (its Authorization header), not a token",
        );
      const filter = filterOf(query, context.tenant);
      const header = request.headers?.['last-event-id'];
      const cursor = header !== undefined && header !== '' ? header : query.lastEventId;
      if (cursor !== undefined && !isChangeCursor(cursor))
        throw new ApiError(
          400,
          'invalid-request',
          `${header ? 'header.Last-Event-ID' : 'query.lastEventId'}: is not an event id of this feed`,
        );
      const waitMs = Math.max(
        0,
        Math.min((query.wait ?? maxLongPollWaitMs / 1000) * 1000, context.remainingMs() - answerMarginMs),
      );
      const answer = await longPoll(cursor, {
        reader: { head: () => log.head(), read: (at) => log.after(filter.tenant, at, pageSize) },
        filter,
        batchView: async (id) => {
          const batch = await batches.get(id);
          return batch && currentViewOf(deps.store, batch, deps.clock.now());
        },
        partialAnswer: (jobId) => answers.read(jobId),
        waitMs,
        pollMs: options.pollMs,
      });
      // The wait granted, so a client times its requests by this stack's, not a constant.
      return json(200, { ...answer, wait: Math.floor(waitMs / 100) / 10 });
    }),
  ];
}
