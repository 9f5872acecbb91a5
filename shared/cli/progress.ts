/**
 * The progress of `opflow run` / `opflow resume`: on a terminal, one bar for the run (counts, calls
 * and an ETA from the pace observed so far) and one line per running job with its current step,
 * updated in place (cli-progress); a job that ends leaves the live area for one line above it, and a
 * job not shown yet takes its place. Elsewhere (a pipe, a CI log), one plain line each time a job
 * moves to another step or status.
 */
import { MultiBar, type SingleBar } from 'cli-progress';
import { isTerminal, type Job } from '../engine/job-record';
import type { WorkflowRegistry } from '../engine/workflow';
import { isSettled } from '../runtime/watch-jobs';
import { formatDuration, jobLine, stepTitle } from './format';

export interface ProgressDisplay {
  /** A newer version of a tracked job. */
  update(job: Job): void;
  /** A message above the bars (or a plain line). */
  note(line: string): void;
  stop(): void;
}

export interface ProgressOptions {
  stream: NodeJS.WritableStream;
  /** Bars on a terminal; plain lines otherwise. */
  interactive: boolean;
  workflows: WorkflowRegistry;
  jobs: readonly Job[];
  /** Show nothing but notes. */
  quiet?: boolean | undefined;
}

/** Job lines shown at once on a terminal; the rest are counted in the run's bar. */
const maxJobLines = 12;
const labelWidth = 32;

export function createProgressDisplay(options: ProgressOptions): ProgressDisplay {
  if (options.quiet) {
    return { update() {}, note: (line) => void options.stream.write(`${line}\n`), stop() {} };
  }
  return options.interactive ? new BarDisplay(options) : new LineDisplay(options);
}

class LineDisplay implements ProgressDisplay {
  readonly #options: ProgressOptions;
  readonly #shown = new Map<string, string>();

  constructor(options: ProgressOptions) {
    this.#options = options;
    for (const job of options.jobs) this.update(job);
  }

  update(job: Job): void {
    const key = `${job.status}:${job.step}`;
    if (this.#shown.get(job.id) === key) return;
    this.#shown.set(job.id, key);
    this.note(jobLine(job, this.#options.workflows));
  }

  note(line: string): void {
    this.#options.stream.write(`${line}\n`);
  }

  stop(): void {}
}

class BarDisplay implements ProgressDisplay {
  readonly #options: ProgressOptions;
  readonly #multibar: MultiBar;
  readonly #runBar: SingleBar;
  readonly #latest = new Map<string, Job>();
  readonly #lines = new Map<string, SingleBar>();
  /** When the display started, and how many of its jobs had ended by then: the pace is from the rest. */
  readonly #startedAt = Date.now();
  readonly #settledAtStart: number;

  constructor(options: ProgressOptions) {
    this.#options = options;
    this.#settledAtStart = options.jobs.filter((job) => isSettled(job)).length;
    this.#multibar = new MultiBar({
      stream: options.stream,
      hideCursor: true,
      clearOnComplete: false,
      barsize: 24,
      barCompleteChar: '█',
      barIncompleteChar: '░',
      fps: 5,
      format: '{name} {bar} {text}',
    });
    this.#runBar = this.#multibar.create(Math.max(1, options.jobs.length), 0, {
      name: 'run'.padEnd(labelWidth),
      text: '',
    });
    for (const job of options.jobs) this.#latest.set(job.id, job);
    for (const job of options.jobs) this.update(job);
    this.#refreshRun();
  }

  update(job: Job): void {
    const previous = this.#latest.get(job.id);
    if (previous && previous.version > job.version) return;
    this.#latest.set(job.id, job);
    const bar = this.#lines.get(job.id);
    if (isSettled(job)) {
      if (bar) {
        this.#multibar.remove(bar);
        this.#lines.delete(job.id);
      }
      if (!previous || !isSettled(previous) || previous.status !== job.status) {
        this.#multibar.log(`${symbolOf(job)} ${jobLine(job, this.#options.workflows)}\n`);
      }
      // A running job not shown for want of room takes the freed line.
      for (const other of this.#latest.values()) {
        if (this.#lines.size >= maxJobLines) break;
        if (!isSettled(other) && !this.#lines.has(other.id)) this.#showLine(other);
      }
    } else {
      this.#showLine(job);
    }
    this.#refreshRun();
  }

  /** Creates or updates the line of a running job (when there is room for it). */
  #showLine(job: Job): void {
    const bar = this.#lines.get(job.id);
    const { index, total } = this.#position(job);
    const payload = { name: fitLabel(job.label ?? job.id), text: this.#stepText(job) };
    if (bar) {
      bar.setTotal(total);
      bar.update(index, payload);
    } else if (this.#lines.size < maxJobLines) {
      this.#lines.set(job.id, this.#multibar.create(total, index, payload));
    }
  }

  note(line: string): void {
    this.#multibar.log(`${line}\n`);
  }

  stop(): void {
    this.#refreshRun();
    // MultiBar.stop() renders the bars but not the lines logged since the last frame: flush them first.
    this.#multibar.update();
    this.#multibar.stop();
  }

  #stepText(job: Job): string {
    const title = stepTitle(job, this.#options.workflows);
    if (job.status === 'WAITING') return `${title}, waiting for the platform`;
    return job.attempts > 0 ? `${title} (retry ${job.attempts})` : title;
  }

  #position(job: Job): { index: number; total: number } {
    const steps = this.#options.workflows.get(job.workflow)?.steps ?? [];
    const index = steps.findIndex((step) => step.name === job.step);
    return { index: Math.max(0, index), total: Math.max(1, steps.length) };
  }

  #refreshRun(): void {
    const jobs = [...this.#latest.values()];
    const count = (predicate: (job: Job) => boolean) => jobs.filter(predicate).length;
    const done = count((job) => isSettled(job));
    const parts = [`${done}/${jobs.length} jobs`];
    const succeeded = count((job) => job.status === 'SUCCEEDED');
    const failed = count((job) => job.status === 'FAILED' || job.status === 'CANCELLED');
    const waiting = count((job) => job.status === 'AWAITING_INPUT');
    if (succeeded) parts.push(`${succeeded} done`);
    if (failed) parts.push(`${failed} failed`);
    if (waiting) parts.push(`${waiting} need a selection`);
    const hidden = count((job) => !isSettled(job)) - this.#lines.size;
    if (hidden > 0) parts.push(`${hidden} more running`);
    parts.push(`${jobs.reduce((sum, job) => sum + job.usage.calls, 0)} calls`);
    const eta = etaMs(done - this.#settledAtStart, jobs.length - done, Date.now() - this.#startedAt);
    if (eta !== undefined) parts.push(`ETA ${formatDuration(eta)}`);
    this.#runBar.setTotal(Math.max(1, jobs.length));
    this.#runBar.update(done, { text: parts.join(' · ') });
  }
}

/**
 * Time left at the pace observed so far: `ended` jobs in `elapsedMs` since the display started,
 * `left` still to end. Undefined until one has ended (no pace yet) or when none is left.
 */
export function etaMs(ended: number, left: number, elapsedMs: number): number | undefined {
  if (ended <= 0 || left <= 0 || elapsedMs <= 0) return undefined;
  return (elapsedMs / ended) * left;
}

function fitLabel(label: string): string {
  return label.length > labelWidth ? `${label.slice(0, labelWidth - 1)}…` : label.padEnd(labelWidth);
}

function symbolOf(job: Job): string {
  if (job.status === 'SUCCEEDED') return '✔';
  if (isTerminal(job.status)) return '✖';
  return '?';
}
