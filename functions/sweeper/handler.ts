/**
 * Lambda `sweeper`, run every minute by a schedule: re-sends work for unfinished jobs whose message
 * was lost or whose wait outlasted the queue's delay (shared/runtime/aws-sweeper.ts).
 */
import type { Context } from 'aws-lambda';
import { createLambdaRuntime } from '../../shared/runtime/aws-lambda';
import { createSweeper } from '../../shared/runtime/aws-sweeper';

// Once per instance: clients and caches live across invocations.
const sweeper = createSweeper(createLambdaRuntime());

export function handler(event: unknown, context: Context): Promise<{ requeued: number; expired: number }> {
  return sweeper.handle(event, context);
}
