/**
 * Why a job stalls behind a clock ahead of this one, in a line for people (`opflow resume`, `opflow
 * status`): a lease or a delay of its queue message stamped by a process whose clock is ahead (the
 * local queue), or its record written by one (both backends). Each line says until when the job is
 * held as written, how far that clock looks ahead, and when this process takes the job over.
 */
import type { MessageHeldAhead } from '../backends/local';
import { writerAheadMs } from '../engine/clock-skew';
import type { Job } from '../engine/job-record';
import type { Backend } from './backend';

/** One job held by a clock ahead of this one. */
export interface SkewStall {
  jobId: string;
  label: string | undefined;
  /** `lease`: a process holds its message; `message`: its message waits a delay; `record`: its record only. */
  kind: 'lease' | 'message' | 'record';
  /** Until when the job is held, as written (on the other clock). */
  heldUntil: number;
  /** How far the writer's clock looked ahead of this one. */
  aheadMs: number;
  /** When a process on this clock takes it over (a lease: unless its holder renews it meanwhile). */
  takenOverAt: number;
  /** The process holding the lease (host/pid/nonce). */
  holder?: string | undefined;
}

/** The jobs among `jobs` held by a clock ahead of `now`'s, soonest taken over first. */
export function skewStalls(backend: Backend, jobs: readonly Job[], now: number): SkewStall[] {
  // Only a queue of this machine (the local one) has messages stamped by another process's clock.
  const queue = backend.work.where === 'here' ? backend.work.queue : undefined;
  const byId = new Map(jobs.map((job) => [job.id, job]));
  const stalls = new Map<string, SkewStall>();
  for (const held of queue?.heldAhead(now) ?? []) {
    const job = byId.get(held.jobId);
    if (!job || !heldFor(job, held) || stalls.has(job.id)) continue;
    const cap = held.leaseOwner === undefined ? queue?.maxDelayMs : queue?.maxLeaseMs;
    stalls.set(job.id, messageStall(job, held, now, cap ?? 0));
  }
  for (const job of jobs) {
    const aheadMs = writerAheadMs(job, now);
    if (aheadMs === 0 || stalls.has(job.id) || job.status === 'AWAITING_INPUT') continue;
    const waitMs = Math.max(0, job.nextRunAt - job.updatedAt);
    stalls.set(job.id, {
      jobId: job.id,
      label: job.label,
      kind: 'record',
      heldUntil: job.nextRunAt,
      aheadMs,
      takenOverAt: now + waitMs,
    });
  }
  return [...stalls.values()].sort((a, b) => a.takenOverAt - b.takenOverAt);
}

/**
 * Whether the held message is the job's: of its version, or the one whose holder claimed the job's
 * billed call since (the claim, and each heartbeat of it, moved the version past the message's).
 */
function heldFor(job: Job, held: MessageHeldAhead): boolean {
  if (held.version === job.version) return true;
  return (
    held.leaseOwner !== undefined &&
    job.inFlightSince !== undefined &&
    job.inFlightBy === held.leaseOwner &&
    held.version < job.version
  );
}

function messageStall(job: Job, held: MessageHeldAhead, now: number, capMs: number): SkewStall {
  // Re-based on this clock: the lease or delay it was written with, counted from now.
  const meantMs = held.aheadMs > 0 ? Math.min(Math.max(0, held.visibleAt - (now + held.aheadMs)), capMs) : 0;
  return {
    jobId: job.id,
    label: job.label,
    kind: held.leaseOwner === undefined ? 'message' : 'lease',
    heldUntil: held.visibleAt,
    aheadMs: Math.max(held.aheadMs, writerAheadMs(job, now)),
    takenOverAt: now + meantMs,
    holder: held.leaseOwner,
  };
}

/** `job 01J… (a.txt) is held until 03:46 by a process whose clock looks 2 h 0 min ahead (…); resume takes it over by 01:47 unless …` */
export function describeSkewStall(stall: SkewStall, command: string): string {
  const job = `job ${stall.jobId}${stall.label ? ` (${stall.label})` : ''}`;
  const ahead = aheadText(stall.aheadMs);
  switch (stall.kind) {
    case 'lease':
      return `${job} is held until ${clockTime(stall.heldUntil)} by a process whose clock looks ${ahead} ahead (${stall.holder}); ${command} takes it over by ${clockTime(stall.takenOverAt)} unless that process renews its lease`;
    case 'message':
      return `${job} waits until ${clockTime(stall.heldUntil)}, a time set by a clock that looks ${ahead} ahead; ${command} takes it over and runs it at ${clockTime(stall.takenOverAt)} by this clock`;
    case 'record':
      return `${job} was last written by a clock that looks ${ahead} ahead (due ${clockTime(stall.heldUntil)} by it); ${command} takes it over and counts its times on this clock (due ${clockTime(stall.takenOverAt)})`;
  }
}

function aheadText(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return `${Math.round(ms / 1000)} s`;
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** HH:MM on this machine's clock, with the date when it is not today. */
function clockTime(at: number): string {
  const date = new Date(at);
  const today = new Date();
  const two = (n: number) => String(n).padStart(2, '0');
  const time = `${two(date.getHours())}:${two(date.getMinutes())}`;
  if (date.toDateString() === today.toDateString()) return time;
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${time}`;
}
