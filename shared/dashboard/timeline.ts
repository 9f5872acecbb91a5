/**
 * A job's steps on a timeline, for the dashboard: the workflow's steps in order, each with when the
 * job reached it and left it, its calls, time in calls, billed units, retries, polls and errors.
 * Figures come from the job's history (one event per committed change): the usage added between
 * two events belongs to the step the job was at before the second. Without a history (a job from
 * before it was kept) the steps still show, with the job's position only.
 */
import type { JobEvent } from '../engine/history';
import { isTerminal, type Job, type JobError } from '../engine/job-record';
import { skippedByInput, skippedSteps, type Workflow } from '../engine/workflow';

export type StepState = 'done' | 'current' | 'waiting' | 'failed' | 'cancelled' | 'pending' | 'skipped';

export interface TimelineStep {
  name: string;
  title?: string | undefined;
  operation?: string | undefined;
  state: StepState;
  startedAt?: number | undefined;
  endedAt?: number | undefined;
  durationMs?: number | undefined;
  calls: number;
  callMs: number;
  billedUnits: number;
  throttled: number;
  /** Failed attempts seen at this step (each was retried unless the job failed on it). */
  retries: number;
  polls: number;
  errors: JobError[];
  /** Why the step was skipped: left out by the job's input ("legalData" is false), or optional and failed. */
  skipped?: string | undefined;
}

export interface Timeline {
  jobId: string;
  /** False when no history was kept for this job: figures are then unknown, not zero. */
  recorded: boolean;
  steps: TimelineStep[];
}

function emptyStep(name: string, workflow: Workflow | undefined): TimelineStep {
  const step = workflow?.steps.find((candidate) => candidate.name === name);
  return {
    name,
    title: step?.title,
    operation: step === undefined ? undefined : step.kind === 'fetch' ? 'download' : step.operation,
    state: 'pending',
    calls: 0,
    callMs: 0,
    billedUnits: 0,
    throttled: 0,
    retries: 0,
    polls: 0,
    errors: [],
  };
}

export function buildTimeline(
  workflow: Workflow | undefined,
  job: Job,
  events: readonly JobEvent[],
): Timeline {
  const steps = new Map<string, TimelineStep>();
  for (const step of workflow?.steps ?? []) steps.set(step.name, emptyStep(step.name, workflow));
  const at = (name: string) => {
    let step = steps.get(name);
    if (!step) {
      step = emptyStep(name, workflow);
      steps.set(name, step);
    }
    return step;
  };

  const sorted = [...events].sort((a, b) => a.version - b.version);
  const seenErrors = new Set<string>();
  let previous: JobEvent | undefined;
  let visitStart: number | undefined;
  for (const event of sorted) {
    const step = at(event.step);
    if (previous !== undefined) {
      // What happened between the two commits happened at the step the job was at.
      const before = at(previous.step);
      before.calls += Math.max(0, event.usage.calls - previous.usage.calls);
      before.callMs += Math.max(0, event.usage.callMs - previous.usage.callMs);
      before.billedUnits += Math.max(0, event.usage.billedUnits - previous.usage.billedUnits);
      before.throttled += Math.max(0, event.usage.throttledCalls - previous.usage.throttledCalls);
      if (previous.step !== event.step || event.run !== previous.run) {
        before.endedAt = event.at;
        if (visitStart !== undefined) before.durationMs = (before.durationMs ?? 0) + (event.at - visitStart);
        visitStart = event.at;
      }
    } else {
      visitStart = event.at;
    }
    step.startedAt ??= event.at;
    if (event.step === previous?.step && event.run === previous.run) {
      step.retries = Math.max(step.retries, event.attempts);
      step.polls = Math.max(step.polls, event.polls);
    } else {
      step.retries += event.attempts;
      step.polls += event.polls;
    }
    if (event.error) {
      const key = `${event.error.step}@${event.error.at}`;
      if (!seenErrors.has(key)) {
        seenErrors.add(key);
        at(event.error.step).errors.push(event.error);
      }
    }
    previous = event;
  }
  if (previous && isTerminal(job.status) && visitStart !== undefined) {
    const last = at(previous.step);
    last.endedAt = previous.at;
    last.durationMs = (last.durationMs ?? 0) + (previous.at - visitStart);
  }

  // States: where the job is now, what it passed, what it has not reached.
  const order = [...steps.keys()];
  const currentIndex = order.indexOf(job.step);
  for (const [index, step] of order.map((name, i) => [i, steps.get(name)!] as const)) {
    if (step.name === job.step) {
      step.state =
        job.status === 'SUCCEEDED'
          ? 'done'
          : job.status === 'FAILED'
            ? 'failed'
            : job.status === 'CANCELLED'
              ? 'cancelled'
              : job.status === 'AWAITING_INPUT'
                ? 'waiting'
                : 'current';
    } else if (step.startedAt !== undefined || (sorted.length === 0 && index < currentIndex)) {
      step.state = 'done';
    } else {
      step.state = isTerminal(job.status) ? 'skipped' : 'pending';
    }
  }
  for (const [name, why] of Object.entries(skippedSteps(job.context))) {
    const step = at(name);
    step.skipped = why.message.trim() || why.kind;
    if (why.kind === skippedByInput && name !== job.step) step.state = 'skipped';
  }
  return { jobId: job.id, recorded: sorted.length > 0, steps: order.map((name) => steps.get(name)!) };
}

/** A time of the timeline as the job API writes every time: ISO 8601, UTC. */
const iso = (ms: number | undefined): string | undefined =>
  ms === undefined || !Number.isFinite(ms) ? undefined : new Date(ms).toISOString();

/** The timeline as `GET /jobs/{id}/timeline` answers it: its times in ISO 8601 like every answer. */
export function timelineView(timeline: Timeline) {
  return {
    ...timeline,
    steps: timeline.steps.map((step) => ({
      ...step,
      startedAt: iso(step.startedAt),
      endedAt: iso(step.endedAt),
      errors: step.errors.map((error) => ({ ...error, at: iso(error.at)! })),
    })),
  };
}
