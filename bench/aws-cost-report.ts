/**
 * The verdict of `npm run bench:aws-cost` (bench/aws-cost.ts) on a cell: a backlog's messages per
 * job against a job alone (goal: at most 1.15 times), and the same per upstream call, which takes out
 * the draw (the jobs alone run only the backlog's first tasks, so a backlog of longer tasks polls more
 * per job and is no costlier per call). A cell whose worlds did not finish (a job failed, a message
 * lost) has no figure: it is printed as failed, with why, and does not meet the goal.
 */
import type { CostCounts } from './aws-cost-accounting';

/** The goal: a backlog's messages per job at most this many times a job alone's. */
export const messagesGoal = 1.15;

export interface MessageVerdict {
  /** Backlog messages per job over alone messages per job. */
  perJob: number;
  /** Backlog messages per upstream call over alone messages per upstream call. */
  perCall: number;
  /** Backlog write units per job over alone write units per job. */
  writesPerJob: number;
  meets: boolean;
}

const perJob = (value: number, counts: CostCounts) => value / Math.max(1, counts.jobs);

/** The backlog against the jobs alone: messages and write units (condition failures included). */
export function messageVerdict(alone: CostCounts, backlog: CostCounts): MessageVerdict {
  const ratio = (pick: (c: CostCounts) => number, by: (c: CostCounts) => number) =>
    pick(backlog) / Math.max(1, by(backlog)) / (pick(alone) / Math.max(1, by(alone)));
  const writes = (c: CostCounts) => c.writeUnits + c.conditionFailures;
  const perJobRatio = perJob(backlog.messagesReceived, backlog) / perJob(alone.messagesReceived, alone);
  return {
    perJob: perJobRatio,
    perCall: ratio(
      (c) => c.messagesReceived,
      (c) => c.upstreamCalls,
    ),
    writesPerJob: perJob(writes(backlog), backlog) / perJob(writes(alone), alone),
    meets: Number.isFinite(perJobRatio) && perJobRatio <= messagesGoal,
  };
}

/** A cell of the run: measured (both worlds' counts) or failed (why). */
export type CellOutcome =
  | { label: string; alone: CostCounts; backlog: CostCounts }
  | { label: string; failed: string };

/** One line per cell: the ratios and the verdict, or FAILED and why (no ratio). */
export function verdictLine(cell: CellOutcome): string {
  if ('failed' in cell) return `${cell.label}: FAILED (${cell.failed}): no figure, goal not met`;
  const v = messageVerdict(cell.alone, cell.backlog);
  return (
    `${cell.label}: messages per job ${v.perJob.toFixed(2)} of alone, per upstream call ${v.perCall.toFixed(2)}, ` +
    `write units per job ${v.writesPerJob.toFixed(2)}: ${v.meets ? 'meets' : 'MISSES'} the goal (at most ${messagesGoal})`
  );
}

/** How many cells meet the goal, of all (failed cells count as not meeting it). */
export function goalSummary(cells: readonly CellOutcome[]): string {
  const met = cells.filter((cell) => !('failed' in cell) && messageVerdict(cell.alone, cell.backlog).meets);
  const failed = cells.filter((cell) => 'failed' in cell);
  return (
    `backlog messages per job at most ${messagesGoal} times alone: met on ${met.length} of ${cells.length} cells` +
    (failed.length > 0 ? ` (${failed.length} failed: ${failed.map((cell) => cell.label).join(', ')})` : '')
  );
}
