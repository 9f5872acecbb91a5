/**
 * Lambda `sweeper`, run every minute by a schedule: re-sends work for unfinished jobs whose message
 * was lost or whose wait outlasted the queue's delay (shared/runtime/lambda/sweeper.ts); then, where the stack has reviewers, their pass. It builds only
 * the DynamoDB store and the SQS queue (lambda/sweeper-runtime.ts), not the whole runtime.
 */
import type { Context } from 'aws-lambda';
import { createSweeper, type SweepRun } from '../../shared/runtime/lambda/sweeper';
import { createSweeperRuntime } from '../../shared/runtime/lambda/sweeper-runtime';

// Once per instance: clients and caches live across invocations.
const sweeper = createSweeper(createSweeperRuntime());

export function handler(event: unknown, context: Context): Promise<SweepRun> {
  return sweeper.handle(event, context);
}
