/**
 * Changing a batch's --max-units after it started: a batch paused by the limit continues once the
 * limit is raised above what it billed (or removed), from the item where admission stopped; started
 * items were never stopped. Used by `opflow batch <id> --max-units N` and by `opflow ingest` run
 * again with another --max-units.
 */
import type { Batch, BatchStore } from '../engine/batch-store';

export class LimitRefused extends Error {
  override readonly name = 'LimitRefused';
}

/** The batch with `maxUnits` as its limit (undefined: none), unpaused when the new limit allows. */
export function withMaxUnits(batch: Batch, maxUnits: number | undefined, now: number): Batch {
  const next: Batch = {
    ...batch,
    version: batch.version + 1,
    options: { ...batch.options, maxUnits },
    updatedAt: now,
  };
  const room = maxUnits === undefined || batch.settled.billedUnits < maxUnits;
  if (batch.status === 'PAUSED' && room) {
    next.status = batch.cursor.done ? 'RUNNING' : 'INGESTING';
    next.reason = undefined;
    next.finishedAt = undefined;
  }
  return next;
}

/** Commits a new limit (retrying on a concurrent write); refuses one already passed. */
export async function setMaxUnits(
  batches: BatchStore,
  batchId: string,
  maxUnits: number | undefined,
  now: () => number,
): Promise<Batch> {
  for (let tries = 0; tries < 20; tries++) {
    const batch = await batches.get(batchId);
    if (!batch) throw new LimitRefused(`no batch ${batchId}`);
    if (maxUnits !== undefined && batch.settled.billedUnits >= maxUnits)
      throw new LimitRefused(
        `batch ${batchId} has billed ${batch.settled.billedUnits} units already: --max-units must be more than that`,
      );
    const next = withMaxUnits(batch, maxUnits, now());
    if (await batches.commit(next, batch.version)) return next;
  }
  throw new LimitRefused(`batch ${batchId} keeps changing; try again`);
}
