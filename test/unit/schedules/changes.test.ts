// The "Changes since the previous run" section of scheduled reports: what each workflow compares,
// how the previous run is found (the latest earlier slot that succeeded), and where it appears.
import { describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/engine/job-record';
import { reportKeys, stepOutputKey } from '../../../shared/engine/report';
import type { Workflow } from '../../../shared/engine/workflow';
import { withSectionAfterLine } from '../../../shared/reports/html';
import { writeJobReport as writeReport } from '../../../shared/reports/write-job-report';
import {
  compareDigests,
  type RunDigest,
  reportSections,
  scheduleRunOf,
} from '../../../shared/schedules/changes';
import { slotKey } from '../../../shared/schedules/slots';
import { workflows } from '../../../shared/workflows';
import { makeJob, T0 } from '../../support/factories';
import { MemoryReportStore } from '../../support/memory-ports';

const day = 24 * 60 * 60_000;
const workflow = (name: string) => workflows.get(name) as Workflow;

/** A finished job of schedule `name` at `slot` whose step outputs are `outputs`. */
async function finishedRun(
  reports: MemoryReportStore,
  options: {
    name?: string;
    slot: number;
    workflow: string;
    input: unknown;
    outputs: Record<string, unknown>;
  },
): Promise<{ job: Job; result: Record<string, unknown>; markdown: string; html: string }> {
  const base = makeJob({
    workflow: options.workflow,
    source: 'schedule',
    idempotencyKey: slotKey(options.name ?? 'nightly', options.slot),
    status: 'SUCCEEDED',
    finishedAt: options.slot + 60_000,
  });
  const job = { ...base, outputs: Object.keys(options.outputs).map((name) => stepOutputKey(base.id, name)) };
  for (const [name, value] of Object.entries(options.outputs))
    await reports.put(stepOutputKey(job.id, name), JSON.stringify(value), 'application/json');
  await writeReport(reports, workflow(options.workflow), job, options.input);
  const keys = reportKeys(job.id);
  return {
    job,
    result: JSON.parse(reports.text(keys.result)!),
    markdown: reports.text(keys.markdown)!,
    html: reports.text(keys.html)!,
  };
}

const novelty = (patents: string[]) => ({
  'agent-result': {
    find_patent_num: patents.length,
    final_result: patents.map((patent_id, index) => ({
      patent_id,
      public_score: 0.9 - index / 10,
      document: `Document of ${patent_id}`,
    })),
  },
});

describe('scheduleRunOf', () => {
  it('reads the schedule and slot from a slot job, a triggered job, and nothing else', () => {
    const slot = Date.parse('2026-03-29T01:30:00Z');
    expect(scheduleRunOf({ source: 'schedule', idempotencyKey: slotKey('a:b', slot), tenant: 't' })).toEqual({
      name: 'a:b',
      slot,
      tenant: 't',
    });
    expect(
      scheduleRunOf({ source: 'schedule', idempotencyKey: `${slotKey('n', slot)}:manual`, tenant: 't' }),
    ).toEqual({ name: 'n', slot, tenant: 't' });
    expect(scheduleRunOf({ source: 'cli', idempotencyKey: slotKey('n', slot), tenant: 't' })).toBeUndefined();
    expect(scheduleRunOf({ source: 'schedule', idempotencyKey: 'other', tenant: 't' })).toBeUndefined();
  });
});

describe('scheduled reports', () => {
  it('say the first run is the first, then list new and dropped references of a novelty check', async () => {
    const reports = new MemoryReportStore();
    const input = { text: 'A hinge that folds twice.' };
    const first = await finishedRun(reports, {
      slot: T0,
      workflow: 'novelty-check',
      input,
      outputs: novelty(['CN1A', 'US2B', 'EP3C']),
    });
    expect(first.result['changes']).toMatchObject({ schedule: 'nightly', first: true });
    // The verdict and its cost first, then what changed, then the detail.
    expect(first.markdown).toMatch(
      /^# Novelty check: .*\n\n## Conclusion\n[^#]*\*\*Cost:\*\* [^\n]*\n\n## Changes since the previous run\n\nThis is the first run/,
    );

    const second = await finishedRun(reports, {
      slot: T0 + day,
      workflow: 'novelty-check',
      input,
      outputs: novelty(['CN1A', 'EP3C', 'JP4D', 'KR5E']),
    });
    const changes = second.result['changes'] as Record<string, unknown>;
    expect(changes).toMatchObject({
      first: false,
      unchanged: false,
      previous: { jobId: first.job.id, slot: new Date(T0).toISOString() },
    });
    expect(changes['lists']).toEqual([
      {
        kind: 'references',
        added: [expect.objectContaining({ id: 'JP4D' }), expect.objectContaining({ id: 'KR5E' })],
        removed: [expect.objectContaining({ id: 'US2B' })],
        now: 4,
        before: 3,
      },
    ]);
    const heading = `## Changes since ${new Date(T0).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    // Near the top: right after the verdict and the cost line, before the workflow's detail.
    const lines = second.markdown.split('\n');
    const at = lines.indexOf(heading);
    expect(lines[at - 2]).toMatch(/^\*\*Cost:\*\* /);
    expect(second.markdown.indexOf('## Conclusion')).toBeLessThan(second.markdown.indexOf(heading));
    expect(second.markdown.indexOf(heading)).toBeLessThan(
      second.markdown.indexOf('## Features × references'),
    );
    expect(second.markdown).toContain('References: 2 new, 1 dropped (4 now, 3 before).');
    expect(second.markdown).toMatch(/\*\*New references\*\*\n\n- JP4D · score 0\.7/);
    expect(second.markdown).toMatch(/\*\*Dropped references\*\*\n\n- US2B/);
    expect(second.markdown).toContain('Changed sections');
    expect(second.html).toMatch(
      /<p><strong>Cost:<\/strong> [^\n]*<\/p>\n<section class="schedule-changes">\n<h2>Changes since/,
    );
    expect(second.html.indexOf('<h2>Conclusion</h2>')).toBeLessThan(second.html.indexOf('schedule-changes'));
  });

  it('compare with the latest earlier slot that succeeded, whatever order the runs finish in', async () => {
    const reports = new MemoryReportStore();
    const input = { text: 'A hinge that folds twice.' };
    // Backfilled slots finishing out of order: the third slot's run finishes first.
    const third = await finishedRun(reports, {
      slot: T0 + 2 * day,
      workflow: 'novelty-check',
      input,
      outputs: novelty(['A', 'B', 'C']),
    });
    expect(third.result['changes']).toMatchObject({ first: true });
    const first = await finishedRun(reports, {
      slot: T0,
      workflow: 'novelty-check',
      input,
      outputs: novelty(['A']),
    });
    // The run of a later slot is no "previous run" of an earlier one.
    expect(first.result['changes']).toMatchObject({ first: true });
    // The second slot's run failed (no report): the fourth compares with the third.
    const fourth = await finishedRun(reports, {
      slot: T0 + 3 * day,
      workflow: 'novelty-check',
      input,
      outputs: novelty(['A', 'B', 'C']),
    });
    expect(fourth.result['changes']).toMatchObject({
      first: false,
      unchanged: true,
      previous: { jobId: third.job.id },
    });
    expect(fourth.markdown).toContain('Nothing changed since the previous run.');
    // Another schedule's runs are not compared.
    const other = await finishedRun(reports, {
      name: 'weekly',
      slot: T0 + 4 * day,
      workflow: 'novelty-check',
      input,
      outputs: novelty(['A']),
    });
    expect(other.result['changes']).toMatchObject({ schedule: 'weekly', first: true });
  });

  it('keep a patent count time series, with the delta since the previous run and a chart', async () => {
    const reports = new MemoryReportStore();
    const input = { query: 'TTL:(solid-state battery)', title: 'Solid-state batteries' };
    const counts = [1200, 1234, 1234, 1190, 1300];
    let last: Awaited<ReturnType<typeof finishedRun>> | undefined;
    for (const [index, total] of counts.entries()) {
      last = await finishedRun(reports, {
        slot: T0 + index * day,
        workflow: 'patent-count',
        input,
        outputs: { count: { total_search_result_count: total } },
      });
    }
    const changes = last!.result['changes'] as Record<string, unknown>;
    expect(changes['counts']).toEqual([
      { name: 'Solid-state batteries', before: 1190, now: 1300, delta: 110 },
    ]);
    expect(changes['series']).toEqual([
      {
        name: 'Solid-state batteries',
        points: counts.map((value, index) =>
          expect.objectContaining({ value, slot: new Date(T0 + index * day).toISOString() }),
        ),
      },
    ]);
    expect(last!.markdown).toContain(
      'Solid-state batteries: 1,300, +110 since the previous run (1,190; +9.2 %).',
    );
    expect(last!.markdown).toContain('### Solid-state batteries: patent count over time');
    expect(last!.markdown).toMatch(
      /\| Run \(scheduled\) \| Count \| Change \| Job \|\n\| --- .*\n\| [^|]+ \| 1,300 \| \+110 \|/,
    );
    // The chart: inline SVG with a title, a description, axes and every value.
    const svg = /<svg[\s\S]*?<\/svg>/.exec(last!.html)?.[0] ?? '';
    expect(svg).toContain('role="img"');
    expect(svg).toMatch(
      /<title id="(chart-\w+)-title">Solid-state batteries: patent count over time<\/title>/,
    );
    expect(svg).toMatch(
      /<desc id="chart-\w+-desc">5 runs from .* 1,200 patents at first, 1,300 at the latest run \(up 110 since the run before, 1,190\); lowest 1,190, highest 1,300\.<\/desc>/,
    );
    expect(svg).toContain('Count (patents)');
    for (const value of ['1,200', '1,234', '1,190', '1,300']) expect(svg).toContain(`>${value}</text>`);
    expect(svg.match(/<circle /g)).toHaveLength(5);
    expect(last!.html.indexOf('<svg')).toBeLessThan(last!.html.indexOf('<table>'));
  });

  it('of a Q&A says whether the answer changed, and what became of its references', async () => {
    const reports = new MemoryReportStore();
    const input = { question: 'What is a solid-state battery?' };
    const answer = (text: string, links: string[]) => ({
      'create-chat': { chat_id: 'c1', ref_doc: links.map((link) => ({ link, title: `About ${link}` })) },
      answer: { text, references: [], finishReason: 'stop', ids: {} },
    });
    await finishedRun(reports, {
      slot: T0,
      workflow: 'encyclopedia-qa',
      input,
      outputs: answer('A battery with a solid electrolyte.', ['https://a.example/1']),
    });
    const second = await finishedRun(reports, {
      slot: T0 + day,
      workflow: 'encyclopedia-qa',
      input,
      outputs: answer('A battery whose electrolyte is solid.', [
        'https://a.example/1',
        'https://b.example/2',
      ]),
    });
    expect(second.result['changes']).toMatchObject({
      answer: 'changed',
      lists: [{ kind: 'answer references', added: [{ id: 'https://b.example/2' }], removed: [] }],
      sections: { changed: ['Answer', 'References'] },
    });
    expect(second.markdown).toContain('The answer changed.');
  });
});

describe('compareDigests', () => {
  const digest = (overrides: Partial<RunDigest>): RunDigest => ({
    version: 1,
    schedule: 's',
    tenant: 'default',
    slot: T0,
    jobId: 'J1',
    workflow: 'pre-research-report',
    lists: [],
    counts: [],
    sections: [],
    ...overrides,
  });
  it('names new, changed and removed sections (a pre-research report)', () => {
    const before = digest({
      sections: [
        { heading: 'Key players', hash: 'a' },
        { heading: 'Key patents', hash: 'b' },
        { heading: 'Old chapter', hash: 'c' },
      ],
    });
    const now = digest({
      jobId: 'J2',
      slot: T0 + day,
      sections: [
        { heading: 'Key players', hash: 'a' },
        { heading: 'Key patents', hash: 'B' },
        { heading: 'New chapter', hash: 'd' },
      ],
    });
    expect(compareDigests(now, before).sections).toEqual({
      added: ['New chapter'],
      changed: ['Key patents'],
      removed: ['Old chapter'],
    });
    expect(compareDigests(now, before).unchanged).toBe(false);
    expect(compareDigests(now, undefined)).toMatchObject({ first: true, unchanged: false });
  });

  it('finds sections by heading, ignoring the job id, times and downloaded file names', () => {
    const a = reportSections(
      '# T\n\n## One\n\nJob J1 at 2026-01-01T06:00:00Z [r-1.html](r-1.html)\n\n## Two\n\nx',
      'J1',
      ['r-1.html'],
    );
    const b = reportSections(
      '# T\n\n## One\n\nJob J2 at 2026-01-02T06:00:00Z [r-2.html](r-2.html)\n\n## Two\n\ny',
      'J2',
      ['r-2.html'],
    );
    expect(a.map((s) => s.heading)).toEqual(['One', 'Two']);
    expect(a[0]!.hash).toBe(b[0]!.hash);
    expect(a[1]!.hash).not.toBe(b[1]!.hash);
  });

  it('puts the section after the given line, else after the title, else first', () => {
    expect(withSectionAfterLine('# T\n\nlead\n\n**Cost:** 1\n\n## D\n', '**Cost:** 1', '## C\n\nc')).toBe(
      '# T\n\nlead\n\n**Cost:** 1\n\n## C\n\nc\n\n## D\n',
    );
    expect(withSectionAfterLine('# T\n\nbody\n', '**Cost:** 1', '## C\n\nc')).toBe(
      '# T\n\n## C\n\nc\n\nbody\n',
    );
    expect(withSectionAfterLine('body\n', '**Cost:** 1', '## C')).toBe('## C\n\nbody\n');
  });
});
