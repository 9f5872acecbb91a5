/**
 * The records of one kind of upstream resource (tasks, jobs, reports, chats), by id.
 * A record belongs to the key that created it: another key gets the same 404 as an unknown id.
 *
 * Records are plain JSON, so a sandbox with a state file can keep them across restarts. Handlers
 * change records in place; the registry remembers which records it handed out during a request, and
 * `settle()` afterwards finds which of those actually changed.
 */
import type * as z from 'zod';
import { formatIssues } from '../errors/zod-issues';
import { notFound } from './sandbox-rejection';
import { StoredEntries } from './stored-entries';

export class TaskRegistry<T extends { readonly owner: string }> {
  private readonly records = new Map<string, T>();
  private readonly handedOut = new Set<string>();
  private readonly stored = new StoredEntries();

  /**
   * `name` names the registry in the state file (e.g. `novelty`), `field` the identifier in error
   * messages (e.g. `task_id`), `schema` a record as read back from the file. With `durable` false
   * (no state file) nothing is tracked.
   */
  constructor(
    readonly name: string,
    private readonly field: string,
    private readonly schema: z.ZodType<T>,
    private readonly durable = false,
  ) {}

  add(id: string, record: T): T {
    this.records.set(id, record);
    if (this.durable) this.handedOut.add(id);
    return record;
  }

  /** The record, or the platform's not-found answer. */
  get(id: string, owner: string): T {
    const record = this.records.get(id);
    if (!record || record.owner !== owner) throw notFound(this.field, id);
    if (this.durable) this.handedOut.add(id);
    return record;
  }

  get size(): number {
    return this.records.size;
  }

  /** Takes in what the records handed out since the last call look like now; true when any changed. */
  settle(): boolean {
    let changed = false;
    for (const id of this.handedOut) {
      const record = this.records.get(id);
      if (record && this.stored.set(id, record)) changed = true;
    }
    this.handedOut.clear();
    return changed;
  }

  /** Every record, as one JSON object by id (as of the last `settle`). */
  toJson(): string {
    return this.stored.toJson();
  }

  /**
   * Replace the records with those read from a state file (an object by id). Throws, naming the
   * record and field, when one is not valid; nothing is replaced then.
   */
  restore(records: Record<string, unknown>): void {
    const valid = new Map<string, T>();
    for (const [id, value] of Object.entries(records)) {
      const parsed = this.schema.safeParse(value);
      if (!parsed.success) throw new Error(formatIssues(parsed.error, { root: `${this.name}.${id}` }));
      valid.set(id, parsed.data);
    }
    this.records.clear();
    this.stored.clear();
    this.handedOut.clear();
    for (const [id, record] of valid) {
      this.records.set(id, record);
      this.stored.set(id, record);
    }
  }
}
