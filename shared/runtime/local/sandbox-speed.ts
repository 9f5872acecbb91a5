/**
 * Demo speed for the built-in sandbox: its tasks finish `speed` times sooner than the real
 * platform's, and each workflow's poll schedule shrinks by the same factor, so the engine still
 * polls about as often per task as it would for real, just sooner.
 */
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
