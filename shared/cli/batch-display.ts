/**
 * The live line of a running batch: a bar on a terminal (cli-progress), a plain line every few
 * seconds otherwise, nothing with --quiet or --json.
 */
import { SingleBar } from 'cli-progress';
import type { Batch } from '../engine/batch-store';
import { viewOf } from '../ingest/batch-view';
import { formatDuration } from './format';

export interface BatchDisplay {
  update(batch: Batch): void;
  note(line: string): void;
  stop(): void;
}

export function describeProgress(batch: Batch, now: number): string {
  const view = viewOf(batch, now);
  const t = view.totals;
  const parts = [
    `${t.succeeded} succeeded`,
    ...(t.failed + t.cancelled > 0 ? [`${t.failed + t.cancelled} failed`] : []),
    `${t.running} running`,
    `${t.waiting} waiting`,
    ...(view.thisRun.readingDone ? [] : [`reading (${view.thisRun.records} records)`]),
    ...(view.thisRun.invalid > 0 ? [`${view.thisRun.invalid} bad lines`] : []),
    `${view.calls} calls`,
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
  if (options.quiet) return { update() {}, note() {}, stop() {} };
  if (!options.interactive) {
    let last = 0;
    let lastText = '';
    return {
      update(batch) {
        const text = describeProgress(batch, now());
        if (text === lastText || (now() - last < 5_000 && batch.status !== 'FINISHED')) return;
        last = now();
        lastText = text;
        options.stream.write(`opflow: batch ${batch.id}: ${text}\n`);
      },
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
  return {
    update(batch) {
      const done = batch.settled.succeeded + batch.settled.failed + batch.settled.cancelled;
      const text = describeProgress(batch, now());
      if (!started) {
        bar.start(Math.max(batch.items, 1), done, { text });
        started = true;
      }
      bar.setTotal(Math.max(batch.items, 1));
      bar.update(done, { text });
    },
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
