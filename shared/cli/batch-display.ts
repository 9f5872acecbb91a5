/**
 * The live line of a running batch: a bar on a terminal (cli-progress), a plain line every few
 * seconds otherwise, nothing with --quiet or --json.
 */
import { SingleBar } from 'cli-progress';
import type { Batch } from '../engine/batch-store';
import { type BatchView, viewOf } from '../ingest/batch-view';
import { countOf, formatDuration } from './format';

/** What the live line shows of a batch: its view's totals (from the record, or following its jobs). */
export type ProgressView = Pick<BatchView, 'id' | 'items' | 'totals' | 'thisRun' | 'calls' | 'etaMs'>;

export interface BatchDisplay {
  /** Shows the batch as its record says. */
  update(batch: Batch): void;
  /** Shows a view of it (on aws, the live feed's: its totals follow its jobs). */
  show(view: ProgressView): void;
  note(line: string): void;
  stop(): void;
}

export function describeProgress(view: ProgressView): string {
  const t = view.totals;
  const parts = [
    `${t.succeeded} succeeded`,
    ...(t.failed + t.cancelled > 0 ? [`${t.failed + t.cancelled} failed`] : []),
    `${t.running} running`,
    `${t.waiting} waiting`,
    ...(view.thisRun.readingDone ? [] : [`reading (${countOf(view.thisRun.records, 'record')})`]),
    ...(view.thisRun.invalid > 0 ? [`${countOf(view.thisRun.invalid, 'bad line')}`] : []),
    countOf(view.calls, 'call'),
    ...(view.etaMs !== undefined ? [`ETA ${formatDuration(view.etaMs)}`] : []),
  ];
  return parts.join(', ');
}

export function createBatchDisplay(options: {
  stream: NodeJS.WritableStream & { isTTY?: boolean };
  interactive: boolean;
  quiet?: boolean | undefined;
  now?: () => number;
}): BatchDisplay {
  const now = options.now ?? Date.now;
  if (options.quiet) return { update() {}, show() {}, note() {}, stop() {} };
  if (!options.interactive) {
    let last = 0;
    let lastText = '';
    const show = (view: ProgressView, finished = false) => {
      const text = describeProgress(view);
      if (text === lastText || (now() - last < 5_000 && !finished)) return;
      last = now();
      lastText = text;
      options.stream.write(`opflow: batch ${view.id}: ${text}\n`);
    };
    return {
      update: (batch) => show(viewOf(batch, now()), batch.status === 'FINISHED'),
      show: (view) => show(view),
      note(line) {
        options.stream.write(`opflow: ${line}\n`);
      },
      stop() {},
    };
  }
  const bar = new SingleBar({
    format: ' {bar} {value}/{total} items | {text}',
    hideCursor: true,
    stream: options.stream as NodeJS.WriteStream,
    fps: 5,
    clearOnComplete: false,
  });
  let started = false;
  const show = (view: ProgressView) => {
    const done = view.totals.succeeded + view.totals.failed + view.totals.cancelled;
    const text = describeProgress(view);
    if (!started) {
      bar.start(Math.max(view.items, 1), done, { text });
      started = true;
    }
    bar.setTotal(Math.max(view.items, 1));
    bar.update(done, { text });
  };
  return {
    update: (batch) => show(viewOf(batch, now())),
    show,
    note(line) {
      if (started) bar.stop();
      options.stream.write(`opflow: ${line}\n`);
      started = false;
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
