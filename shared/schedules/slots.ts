/**
 * Slots of a schedule: the instants its cron expression names in its time zone (croner). A slot is
 * identified by its UTC instant, so daylight saving time is unambiguous: a time in the skipped hour
 * fires once at the transition, a time in the repeated hour fires once (its first occurrence).
 */
import { createHash } from 'node:crypto';
import { Cron } from 'croner';
import { parseDuration, type Schedule } from '../config/opflow-config';

const crons = new Map<string, Cron>();
function cronOf(schedule: Pick<Schedule, 'cron' | 'timezone'>): Cron {
  const key = `${schedule.timezone} ${schedule.cron}`;
  let cron = crons.get(key);
  if (!cron) {
    cron = new Cron(schedule.cron, { timezone: schedule.timezone, paused: true });
    crons.set(key, cron);
  }
  return cron;
}

/** The first slot strictly after `after`. */
export function nextSlot(schedule: Pick<Schedule, 'cron' | 'timezone'>, after: number): number | undefined {
  const next = cronOf(schedule).nextRun(new Date(after));
  return next ? next.getTime() : undefined;
}

/** Slots in `(after, upTo]`, oldest first, at most `limit`. */
export function slotsBetween(
  schedule: Pick<Schedule, 'cron' | 'timezone'>,
  after: number,
  upTo: number,
  limit = 10_000,
): number[] {
  const slots: number[] = [];
  let at = after;
  for (;;) {
    const next = nextSlot(schedule, at);
    if (next === undefined || next > upTo || slots.length >= limit) return slots;
    slots.push(next);
    at = next;
  }
}

/** The slot's jitter: the same in every process (a hash of name and slot), below the schedule's jitter. */
export function jitterOf(schedule: Pick<Schedule, 'name' | 'jitter'>, slot: number): number {
  if (!schedule.jitter) return 0;
  const span = parseDuration(schedule.jitter);
  if (span <= 0) return 0;
  const hash = createHash('sha256').update(`${schedule.name}@${slot}`).digest().readUInt32BE(0);
  return hash % span;
}

/** The idempotency key of a slot's job. */
export function slotKey(name: string, slot: number): string {
  return `schedule:${name}:${new Date(slot).toISOString()}`;
}
