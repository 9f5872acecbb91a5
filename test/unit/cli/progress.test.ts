// The progress of `opflow run`: a bar for the run and a line per job on a terminal, plain lines elsewhere.
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createProgressDisplay } from '../../../shared/cli/progress';
import { workflows } from '../../../shared/workflows';
import { makeJob } from '../../support/factories';

/** A stream that collects what is written, posing as a terminal when asked. */
function screen(isTTY: boolean) {
  const stream = new PassThrough();
  let written = '';
  stream.on('data', (chunk: Buffer) => {
    written += chunk.toString('utf8');
  });
  Object.assign(stream, { isTTY, columns: 160, rows: 40 });
  return {
    stream,
    // Escape sequences (cursor moves, line clears) removed, to read what a person sees.
    text: () => written.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g'), ''),
  };
}

describe('createProgressDisplay', () => {
  // The bars redraw on a timer (5 frames a second): the tests move that clock by hand.
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('on a terminal: one bar for the run with its counts, a bar per job with its step, a line when one ends', () => {
    const out = screen(true);
    const first = makeJob({ label: 'hinge.md', step: 'summary', status: 'WAITING', version: 3 });
    const second = makeJob({ label: 'valve.txt', step: 'submit' });
    const display = createProgressDisplay({
      stream: out.stream,
      interactive: true,
      workflows,
      jobs: [first, second],
    });
    vi.advanceTimersByTime(250);
    expect(out.text()).toMatch(
      /hinge\.md +[█░]+ summary of the technical solution, waiting for the platform/,
    );
    expect(out.text()).toMatch(/valve\.txt +[█░]+ submit/);
    display.update({ ...second, step: 'features', status: 'RUNNING', version: 4 });
    vi.advanceTimersByTime(250);
    display.update({
      ...first,
      status: 'SUCCEEDED',
      step: 'report-document',
      version: 9,
      usage: { ...first.usage, calls: 16 },
    });
    // an older version arriving late changes nothing
    display.update({ ...first, step: 'submit', version: 2 });
    display.stop();

    const text = out.text();
    expect(text).toMatch(/run +[█░]+ 1\/2 jobs · 1 done · 16 calls/);
    expect(text).toMatch(/valve\.txt +[█░]+ technical features/);
    // the line of a job that ended just before the run stopped is not lost with the last frame
    expect(text).toContain('✔ hinge.md: done');
  });

  it('on a terminal: an ETA from the pace so far; a job that ends leaves the live area and a hidden one takes its line', () => {
    const out = screen(true);
    // 14 running jobs: 12 lines on screen, 2 counted in the run's bar.
    const jobs = Array.from({ length: 14 }, (_, index) =>
      makeJob({ id: `job-${index}`, label: `disclosure-${index}.md`, step: 'submit', status: 'RUNNING' }),
    );
    const display = createProgressDisplay({ stream: out.stream, interactive: true, workflows, jobs });
    vi.advanceTimersByTime(250);
    expect(out.text()).toMatch(/0\/14 jobs · 2 more running · 0 calls/);
    expect(out.text()).not.toMatch(/ETA/);
    expect(out.text()).not.toContain('disclosure-13.md');
    // Two jobs end 20 s in: 12 left at 10 s a job.
    vi.advanceTimersByTime(19_750);
    display.update({ ...jobs[0]!, status: 'SUCCEEDED', step: 'report-document', version: 5 });
    display.update({ ...jobs[1]!, status: 'SUCCEEDED', step: 'report-document', version: 5 });
    vi.advanceTimersByTime(250);
    const text = out.text();
    expect(text).toMatch(/2\/14 jobs · 2 done · 0 calls · ETA 2 min 0 s/);
    expect(text).not.toMatch(/more running · 0 calls · ETA 2 min 0 s/);
    // The hidden jobs took the freed lines, updated in place from then on.
    expect(text).toMatch(/disclosure-13\.md +[█░]+ submit/);
    display.update({ ...jobs[13]!, step: 'summary', status: 'WAITING', version: 3 });
    vi.advanceTimersByTime(250);
    expect(out.text()).toMatch(/disclosure-13\.md +[█░]+ summary of the technical solution, waiting/);
    display.stop();
    // A finished job is one line above the live area, once.
    expect(out.text().match(/✔ disclosure-0\.md/g)).toHaveLength(1);
  });

  it('elsewhere: one plain line each time a job moves to another step or status, none for a repeat', () => {
    const out = screen(false);
    const job = makeJob({ label: 'hinge.md', step: 'submit' });
    const display = createProgressDisplay({ stream: out.stream, interactive: false, workflows, jobs: [job] });
    display.update({ ...job, status: 'RUNNING', version: 2 });
    display.update({ ...job, status: 'RUNNING', version: 3 });
    display.update({ ...job, step: 'summary', status: 'WAITING', version: 4 });
    display.note('a note');
    display.stop();
    expect(out.text().trim().split('\n')).toEqual([
      expect.stringMatching(/^hinge\.md: submit/),
      expect.stringMatching(/^hinge\.md: submit/),
      'hinge.md: summary of the technical solution, waiting for the platform',
      'a note',
    ]);
  });

  it('quiet: notes only', () => {
    const out = screen(true);
    const job = makeJob({ label: 'hinge.md' });
    const display = createProgressDisplay({
      stream: out.stream,
      interactive: true,
      workflows,
      jobs: [job],
      quiet: true,
    });
    display.update({ ...job, status: 'SUCCEEDED', version: 5 });
    display.note('1 job: 1 succeeded');
    display.stop();
    expect(out.text()).toBe('1 job: 1 succeeded\n');
  });
});
