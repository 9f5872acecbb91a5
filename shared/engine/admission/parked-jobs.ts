/**
 * The one port admission reads parked jobs through. A parked job is committed without a message:
 * it waits in its key's line at no cost until a releaser (release.ts) or the sweeper's nudge
 * (nudge.ts) sends it. The DynamoDB job store implements it (its `due` index's `WAIT#` partitions);
 * a backend without admission has none.
 */
/** A parked job as its key's line lists it: its class, tenant and due time are in the row's key. */
export interface ParkedJob {
  id: string;
  class: string;
  /** Undefined for a row written before the tenant was in its key (the job must be read for it). */
  tenant?: string | undefined;
  dueAt?: number | undefined;
}

export interface ListParkedOptions {
  /** At most this many of each tenant in a class; a class is then read whole, within a cap of reads. */
  perTenant?: number | undefined;
  /** Also rows written before the tenant was in their key (tenant undefined). */
  oldKeys?: boolean | undefined;
  /**
   * In [0, 1): where among tenant names a class's reading starts (with `perTenant`), going round to
   * it: a key with more tenants parked than a round reads is read from a different point each round.
   */
  startAt?: number | undefined;
}

export interface ParkedJobs {
  /**
   * Parked jobs of a key's bucket due at or before `until`, at most `limit`: class by class (calls
   * that advance a job first, then speculative polls, then new jobs' first calls); within a class
   * the soonest `perTenant` (default `limit`) of each tenant with parked jobs, merged soonest first.
   * With `oldKeys`, also rows written before the tenant was in their key (tenant undefined).
   */
  listParked(bucket: string, until: number, limit: number, options?: ListParkedOptions): Promise<ParkedJob[]>;
  /** The buckets that have parked jobs (or had lately): the sweeper looks at each. */
  parkedBuckets(): Promise<string[]>;
  /** When the key's line of tokens ends, as seen at `now` (undefined: no token taken lately). */
  lineEndsAt(bucket: string, now: number): Promise<number | undefined>;
}
