/**
 * Demo speed for the built-in sandbox: its tasks finish `speed` times sooner than the real
 * platform's, and each workflow's poll schedule shrinks by the same factor, so the engine still
 * polls about as often per task as it would for real, just sooner.
 */
import * as z from 'zod';
import { pollPolicyOf } from '../../engine/advance';
import type { Step, Workflow, WorkflowRegistry } from '../../engine/workflow';

/** The registry with every declared poll schedule divided by `speed` (1 leaves it untouched). */
export function compressPolling(workflows: WorkflowRegistry, speed: number): WorkflowRegistry {
  if (speed === 1) return workflows;
  const compressed = new Map<string, Workflow>();
  for (const [name, workflow] of workflows) {
    compressed.set(name, { ...workflow, steps: workflow.steps.map((step) => compressStep(step, speed)) });
  }
  return compressed;
}

function compressStep(step: Step, speed: number): Step {
  // Only steps that declare a schedule: a step without one is not waited for before its first look.
  if (!step.poll) return step;
  const policy = pollPolicyOf(step);
  return {
    ...step,
    poll: {
      ...policy,
      firstDelayMs: Math.max(50, Math.round(policy.firstDelayMs / speed)),
      maxDelayMs: Math.max(100, Math.round(policy.maxDelayMs / speed)),
    },
  };
}

const speedSchema = z.coerce.number({ error: 'must be a number' }).min(1, 'must be at least 1').max(10_000);

/**
 * The sandbox speed the step worker of `npm run aws-local` polls at: OPFLOW_SANDBOX_SPEED when
 * OPFLOW_BASE_URL is a loopback address (a local sandbox, as for the local backend); the
 * platform itself always runs at 1.
 */
export function sandboxSpeedOf(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.OPFLOW_SANDBOX_SPEED?.trim();
  const baseUrl = env.OPFLOW_BASE_URL?.trim();
  if (!raw || !baseUrl || !URL.canParse(baseUrl)) return 1;
  const host = new URL(baseUrl).hostname;
  if (!(host === 'localhost' || host === '[::1]' || host.startsWith('127.'))) return 1;
  const parsed = speedSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(`OPFLOW_SANDBOX_SPEED: ${parsed.error.issues[0]?.message} (got "${raw}")`);
  return parsed.data;
}
