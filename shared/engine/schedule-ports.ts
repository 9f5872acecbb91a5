/**
 * The port of schedule state: per schedule, the last slot handled (fired or skipped), the job of
 * the last fired slot and a slot held back by the `buffer-one` overlap policy. Jobs themselves are
 * created with the slot as idempotency key, so this state only says where to continue; losing an
 * update makes a slot fire twice, which creates nothing the second time.
 */

export interface ScheduleState {
  name: string;
  /** The latest slot handled (epoch ms of the scheduled time). */
  lastSlot?: number | undefined;
  /** The latest slot that created a job, and that job. */
  lastFiredSlot?: number | undefined;
  lastJobId?: string | undefined;
  /** A slot waiting for the running job to end (`buffer-one`). */
  buffered?: number | undefined;
  /** Slots skipped by the overlap policy or the catch-up window so far. */
  skipped: number;
  updatedAt: number;
  /** The latest jobs of the schedule, oldest first (change reports and time series read them). */
  runs?: { slot: number; jobId: string }[] | undefined;
  /**
   * Paused at run time (`opflow schedules pause`, the dashboard, `POST /schedules/{name}/pause`):
   * its slots are skipped until resumed. A pause declared in opflow.config.json is the config's.
   */
  paused?: { reason: string; at: number } | undefined;
  /** The job whose run cap (`maxUnitsPerRun`) paused the schedule last: it pauses it only once. */
  runCapJobId?: string | undefined;
}

export interface ScheduleStateStore {
  get(name: string): Promise<ScheduleState | undefined>;
  list(): Promise<ScheduleState[]>;
  /**
   * Writes `next` if the stored state is still `expected` (by `updatedAt`, undefined: none yet);
   * false when another process wrote in between.
   */
  put(next: ScheduleState, expected: ScheduleState | undefined): Promise<boolean>;
}
