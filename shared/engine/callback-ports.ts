/**
 * The ports of outgoing callbacks. The outbox holds one entry per job that has a callback still to
 * deliver, with the time it is next due; the sender claims an entry by moving it forward (a
 * conditional write), so two senders never work on one delivery at once, and a sender that dies
 * leaves the entry to come due again. Each backend has its own adapter file.
 */

export interface CallbackOutboxEntry {
  jobId: string;
  dueAt: number;
}

export interface CallbackOutbox {
  /** Adds (or moves to `dueAt`) the entry of a job. */
  add(jobId: string, dueAt: number): Promise<void>;
  /** Entries due at or before `now`, earliest first. */
  due(now: number, limit: number): Promise<CallbackOutboxEntry[]>;
  /** The entry due first, due or not (a sender sleeps until then); undefined when the outbox is empty. */
  earliest(): Promise<CallbackOutboxEntry | undefined>;
  /** The entry of one job, if it has one (a wake-up message names only the job). */
  entryOf(jobId: string): Promise<CallbackOutboxEntry | undefined>;
  /** Moves an entry to `nextDueAt` if it is still at `entry.dueAt`; false when another sender moved it. */
  move(entry: CallbackOutboxEntry, nextDueAt: number): Promise<boolean>;
  /** Removes an entry if it is still at `entry.dueAt`. */
  remove(entry: CallbackOutboxEntry): Promise<void>;
}

/** The Standard Webhooks secret (`whsec_<base64>`) callbacks of a tenant are signed with. */
export interface CallbackSecrets {
  secretFor(tenant: string): Promise<string>;
}
