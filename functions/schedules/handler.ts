/**
 * Lambda `schedules`: the target of the stack's EventBridge Scheduler schedules; creates the job of
 * one slot (shared/runtime/lambda/automation.ts).
 */
import type { Context } from 'aws-lambda';
import { createScheduleTargetHandler } from '../../shared/runtime/lambda/automation';
import { createLambdaRuntime } from '../../shared/runtime/lambda/runtime';

const runtime = createLambdaRuntime();
const target = createScheduleTargetHandler(runtime);

export function handler(event: unknown, context: Context) {
  return runtime.settle(target.handle(event, context));
}
