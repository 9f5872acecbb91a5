/**
 * Lambda `events`, behind the job table's stream: writes each new version of a job into the change
 * log that `GET /events` answers (shared/runtime/lambda/events-stream.ts). It runs only on writes.
 */
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { createEventsStream, createEventsStreamRuntime } from '../../shared/runtime/lambda/events-stream';

// Once per instance: clients live across invocations.
const events = createEventsStream(createEventsStreamRuntime());

export function handler(event: DynamoDBStreamEvent, context: Context): Promise<{ changes: number }> {
  return events.handle(event, context);
}
