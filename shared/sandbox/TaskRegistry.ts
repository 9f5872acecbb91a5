/**
 * The records of one kind of upstream resource (tasks, jobs, reports, chats), by id.
 * A record belongs to the key that created it: another key gets the same 404 as an unknown id.
 */
import { notFound } from './SandboxRejection';

export class TaskRegistry<T extends { readonly owner: string }> {
  private readonly records = new Map<string, T>();

  /** `field` names the identifier in error messages, e.g. `task_id`. */
  constructor(private readonly field: string) {}

  add(id: string, record: T): T {
    this.records.set(id, record);
    return record;
  }

  /** The record, or the platform's not-found answer. */
  get(id: string, owner: string): T {
    const record = this.records.get(id);
    if (!record || record.owner !== owner) throw notFound(this.field, id);
    return record;
  }

  get size(): number {
    return this.records.size;
  }
}
