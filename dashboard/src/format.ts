/** How times, durations, counts, caps and jobs are written for people. */
import type { JobView, WebhookSource } from './types';

export function toDate(value: string | number | undefined | null): Date | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

const dayFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' });
const dayYearFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const secondsFormat = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** A day as people write it: "26 Nov" this year, "26 Nov 2025" another year. */
export function formatDay(value: Date): string {
  return value.getFullYear() === new Date().getFullYear()
    ? dayFormat.format(value)
    : dayYearFormat.format(value);
}

/**
 * A moment with its date, always ("today 22:46:24", "yesterday 09:02", "24 Nov 14:10"): a bare time
 * is ambiguous the day after.
 */
export function formatTime(value: string | number | undefined | null): string {
  const date = toDate(value);
  if (!date) return '';
  const days = dayNumber(new Date()) - dayNumber(date);
  if (days === 0) return `today ${secondsFormat.format(date)}`;
  if (days === 1) return `yesterday ${timeFormat.format(date)}`;
  if (days === -1) return `tomorrow ${timeFormat.format(date)}`;
  return `${formatDay(date)} ${timeFormat.format(date)}`;
}

/** The local calendar day of a date, as a whole number (for "today", "yesterday" and per-day charts). */
export function dayNumber(date: Date): number {
  return Math.floor((date.getTime() - date.getTimezoneOffset() * 60_000) / 86_400_000);
}

export function formatDuration(ms: number | undefined | null): string {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** How long ago (or from now) a moment is, in words: "3 min ago", "in 2 h 5 min". */
export function formatRelative(value: string | number | undefined | null, now = Date.now()): string {
  const date = toDate(value);
  if (!date) return '';
  const delta = date.getTime() - now;
  if (Math.abs(delta) < 5000) return 'just now';
  const text = formatDuration(
    Math.abs(Math.abs(delta) < 60_000 ? delta : Math.round(delta / 60_000) * 60_000),
  );
  return delta < 0 ? `${text} ago` : `in ${text}`;
}

/** How long a job took (or has taken so far). */
export function jobDuration(
  job: Pick<JobView, 'createdAt' | 'finishedAt'>,
  now = Date.now(),
): number | undefined {
  const start = toDate(job.createdAt);
  if (!start) return undefined;
  const end = toDate(job.finishedAt)?.getTime() ?? now;
  return Math.max(0, end - start.getTime());
}

export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count.toLocaleString()} ${count === 1 ? word : many}`;
}

export function jobTitle(job: Pick<JobView, 'title' | 'label' | 'id'>): string {
  return job.title ?? job.label ?? job.id;
}

/** Which upstream served a job, for people ("sandbox (simulated data)", a URL and key fingerprint). */
export function upstreamText(upstream: JobView['upstream']): string {
  if (!upstream) return 'not yet known (no call made)';
  if (upstream.kind === 'sandbox') return 'sandbox (simulated data, not real publications)';
  return `${upstream.baseUrl}, key ${upstream.keyFingerprint.slice(0, 8)}`;
}

/** A status as people read it: "awaiting input", "succeeded". */
export function statusText(status: string): string {
  return status.toLowerCase().replace(/_/g, ' ');
}

/** The title people read for a workflow's step ("technical features"), else its name. */
export function stepTitle(
  docs: readonly { name: string; steps: { name: string; title: string }[] }[] | undefined,
  workflow: string,
  step: string,
): string {
  return (
    docs?.find((doc) => doc.name === workflow)?.steps.find((entry) => entry.name === step)?.title ?? step
  );
}

/** A schedule's or webhook source's cost caps and the last 24 hours' spend (the same shape for both). */
export type Caps = WebhookSource['caps'];

/**
 * The caps in one line, the same on the Schedules and Webhooks pages: "Caps: 8 units a run · 3 of 12
 * units a day spent (last 24 h)", or "No cap: 1 unit spent in the last 24 h" when none is set; each
 * count with its plural. `freesAt` adds when a day cap reached frees again (the Webhooks page says
 * it in its own "reopens" line).
 */
export function capsText(caps: Caps, { freesAt = true }: { freesAt?: boolean } = {}): string {
  const parts: string[] = [];
  if (caps.maxUnitsPerRun !== undefined) parts.push(`${plural(caps.maxUnitsPerRun, 'unit')} a run`);
  if (caps.maxUnitsPerDay !== undefined)
    parts.push(
      `${caps.spentLast24h.toLocaleString()} of ${plural(caps.maxUnitsPerDay, 'unit')} a day spent (last 24 h)`,
    );
  else parts.push(`${plural(caps.spentLast24h, 'unit')} spent in the last 24 h`);
  if (freesAt && caps.dayCapFreesAt) parts.push(`at the day cap until ${formatTime(caps.dayCapFreesAt)}`);
  const capped = caps.maxUnitsPerRun !== undefined || caps.maxUnitsPerDay !== undefined;
  return `${capped ? 'Caps' : 'No cap'}: ${parts.join(' · ')}`;
}
