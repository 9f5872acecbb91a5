/**
 * The one port admission reads parked jobs through. A parked job is committed without a message:
 * it waits in its key's line at no cost until a releaser (release.ts) or the sweeper's nudge
 * (nudge.ts) sends it. The DynamoDB job store implements it (its `due` index's `WAIT#` partitions);
 * a backend without admission has none.
 */
export interface ParkedJobs {
  /**
   * Parked jobs of a key's bucket due at or before `until`, at most `limit`: class by class (calls
   * that advance a job first, then speculative polls, then new jobs' first calls), soonest first
   * within each class.
   */
  listParked(bucket: string, until: number, limit: number): Promise<{ id: string; class: string }[]>;
  /** The buckets that have parked jobs (or had lately): the sweeper looks at each. */
  parkedBuckets(): Promise<string[]>;
  /** When the key's line of tokens ends, as seen at `now` (undefined: no token taken lately). */
  lineEndsAt(bucket: string, now: number): Promise<number | undefined>;
}
