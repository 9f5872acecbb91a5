/**
 * Lambda `schedules`: the target of the stack's EventBridge Scheduler schedules; creates the job of
 * one slot (shared/runtime/lambda/automation.ts). It builds the job side of the engine only
 * (lambda/jobs-runtime.ts): no Open Platform client, no Secrets Manager.
 */
import type { Context } from 'aws-lambda';
import { createScheduleTargetHandler } from '../../shared/runtime/lambda/automation';
import { createJobsRuntime } from '../../shared/runtime/lambda/jobs-runtime';

// Once per instance: clients and caches live across invocations.
const runtime = createJobsRuntime();
const target = createScheduleTargetHandler({ pipeline: runtime, observability: runtime.observability });

export function handler(event: unknown, context: Context) {
  return runtime.settle(target.handle(event, context));
}
