/**
 * What a batch would spend: per workflow, the calls and billed units earlier finished jobs of that
 * workflow used on average (the last few hundred), else at least one call per step and units
 * unknown.
 */
import type { JobStore } from '../engine/ports';
import type { WorkflowRegistry } from '../engine/workflow';

export interface WorkflowEstimate {
  workflow: string;
  items: number;
  /** Jobs the averages come from (0: none finished yet, the calls are a floor). */
  basedOn: number;
  callsPerItem: number;
  billedUnitsPerItem?: number | undefined;
  calls: number;
  billedUnits?: number | undefined;
}

export interface BatchEstimate {
  workflows: WorkflowEstimate[];
  calls: number;
  /** Undefined when a workflow has no finished job to learn from. */
  billedUnits?: number | undefined;
}

export async function estimateBatch(
  store: JobStore,
  workflows: WorkflowRegistry,
  byWorkflow: Record<string, number>,
): Promise<BatchEstimate> {
  const samples = new Map<string, { calls: number; units: number; n: number }>();
  const page = await store.list({ status: 'SUCCEEDED', limit: 1000 });
  for (const job of page.jobs) {
    const sample = samples.get(job.workflow) ?? { calls: 0, units: 0, n: 0 };
    if (sample.n >= 200) continue;
    sample.calls += job.usage.calls;
    sample.units += job.usage.billedUnits;
    sample.n += 1;
    samples.set(job.workflow, sample);
  }
  const estimates: WorkflowEstimate[] = Object.entries(byWorkflow).map(([workflow, items]) => {
    const sample = samples.get(workflow);
    if (sample && sample.n > 0) {
      const callsPerItem = sample.calls / sample.n;
      const billedUnitsPerItem = sample.units / sample.n;
      return {
        workflow,
        items,
        basedOn: sample.n,
        callsPerItem,
        billedUnitsPerItem,
        calls: Math.round(callsPerItem * items),
        billedUnits: Math.round(billedUnitsPerItem * items),
      };
    }
    const steps = workflows.get(workflow)?.steps.filter((step) => step.kind !== 'fetch').length ?? 1;
    return { workflow, items, basedOn: 0, callsPerItem: steps, calls: steps * items };
  });
  const unknownUnits = estimates.some((estimate) => estimate.billedUnits === undefined);
  return {
    workflows: estimates,
    calls: estimates.reduce((sum, estimate) => sum + estimate.calls, 0),
    billedUnits: unknownUnits
      ? undefined
      : estimates.reduce((sum, estimate) => sum + (estimate.billedUnits ?? 0), 0),
  };
}
