/** How times, durations, counts and jobs are written for people. */
import type { JobView } from './types';

export function toDate(value: string | number | undefined | null): Date | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

export function formatTime(value: string | number | undefined | null): string {
  const date = toDate(value);
  if (!date) return '';
  const today = new Date().toDateString() === date.toDateString();
  return today
    ? date.toLocaleTimeString()
    : `${date.toLocaleDateString()} ${date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}`;
}

export function formatDuration(ms: number | undefined | null): string {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
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
