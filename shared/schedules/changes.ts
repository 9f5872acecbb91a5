/**
 * What changed since the previous run of the same schedule: every report of a scheduled job gets a
 * "Changes since <previous run>" section near its top, after the answer and its cost line (report.md, report.html) and a `changes`
 * object in result.json.
 *
 * Each finished scheduled job leaves a small digest of its outcome in the report store, under
 * `reports/schedules/<tenant>/<schedule>/<slot>_<jobId>.json`: its references, solutions, counts,
 * answer and report sections (hashed). The report of the next run reads the latest digest of an
 * earlier slot and compares. Only the report store is used, so it works wherever reports are
 * written (the step worker on aws, any local worker), whichever way the job was created (a slot,
 * `opflow schedules trigger`, a backfill, EventBridge Scheduler). A run that failed leaves no
 * digest: the comparison is with the latest run that succeeded. Patent-count schedules read every
 * digest of their query (at most {@link seriesLength}): the time series the report charts.
 */
import type { Job } from '../engine/job-record';
import type { ReportStore } from '../engine/ports';
import type { DigestEntry, ReportInput, Workflow } from '../engine/workflow';
import { markdownToHtml } from '../reports/html';
import { blocks, count, heading, inline, shorten, table } from '../reports/markdown';
import { digestHash } from '../workflows/common/digest';
import { countSeriesChart } from './series-chart';

/** Points a patent-count time series keeps (the latest ones). */
export const seriesLength = 100;
/** Entries listed per kind of change in the report (all of them are in result.json). */
const listedEntries = 50;

/** The schedule a job was created for, from its idempotency key (`schedule:<name>:<slot>[:manual]`). */
export function scheduleRunOf(
  job: Pick<Job, 'source' | 'idempotencyKey' | 'tenant'>,
): { name: string; slot: number; tenant: string } | undefined {
  if (job.source !== 'schedule' || !job.idempotencyKey) return undefined;
  const match = /^schedule:(.+):(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)(?::manual)?$/.exec(
    job.idempotencyKey,
  );
  if (!match) return undefined;
  const slot = Date.parse(match[2]!);
  return Number.isFinite(slot) ? { name: match[1]!, slot, tenant: job.tenant } : undefined;
}

export type { DigestEntry };

/** The comparable outcome of one run. */
export interface RunDigest {
  version: 1;
  schedule: string;
  tenant: string;
  slot: number;
  jobId: string;
  workflow: string;
  finishedAt?: number | undefined;
  /** Lists whose entries may come and go: references, solutions. */
  lists: { kind: string; entries: DigestEntry[] }[];
  /** Named numbers (patent count: the query's total). */
  counts: { name: string; value: number }[];
  /** The report's sections (## and ### headings) and a hash of each one's text. */
  sections: { heading: string; hash: string }[];
  /** The answer of a Q&A or chat (or any workflow's `answer`): its hash, length and beginning. */
  answer?: { hash: string; length: number; excerpt: string } | undefined;
}

export interface SeriesPoint {
  slot: number;
  jobId: string;
  value: number;
}

/** What result.json's `changes` holds. */
export interface ScheduleChanges {
  schedule: string;
  /** True for the first run of the schedule that succeeded: nothing to compare with. */
  first: boolean;
  previous?: { jobId: string; slot: string; finishedAt?: string | undefined } | undefined;
  unchanged: boolean;
  lists: { kind: string; added: DigestEntry[]; removed: DigestEntry[]; now: number; before: number }[];
  counts: { name: string; before?: number | undefined; now: number; delta?: number | undefined }[];
  sections: { added: string[]; removed: string[]; changed: string[] };
  answer?: 'changed' | 'unchanged' | 'new' | undefined;
  /** Patent count: the counts of this query over the runs of the schedule, oldest first. */
  series?: { name: string; points: { slot: string; jobId: string; value: number }[] }[] | undefined;
}

const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** The report's sections by heading, with the job's own id and times taken out of their text. */
export function reportSections(
  markdown: string,
  jobId: string,
  attachmentNames: readonly string[] = [],
): { heading: string; hash: string }[] {
  const sections: { heading: string; hash: string }[] = [];
  const used = new Map<string, number>();
  let current: { heading: string; lines: string[] } | undefined;
  const close = () => {
    if (!current) return;
    let text = current.lines.join('\n').split(jobId).join('<job>');
    // A downloaded document's name differs from run to run; its content is not in the report.
    for (const name of attachmentNames)
      if (name !== '') text = text.split(encodeURIComponent(name)).join('<file>').split(name).join('<file>');
    text = text
      .replace(/\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?Z?/g, '<time>')
      .replace(/\s+/g, ' ')
      .trim();
    sections.push({ heading: current.heading, hash: digestHash(text) });
  };
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^(```|~~~)/.test(line)) fenced = !fenced;
    const match = fenced ? null : /^(#{2,3})\s+(.*?)\s*#*\s*$/.exec(line);
    if (match) {
      close();
      const text = match[2]!.replace(/\\(.)/g, '$1');
      const seen = (used.get(text) ?? 0) + 1;
      used.set(text, seen);
      current = { heading: seen > 1 ? `${text} (${seen})` : text, lines: [] };
    } else {
      current?.lines.push(line);
    }
  }
  close();
  return sections;
}

/**
 * The comparable outcome of a finished job: the workflow's own `digest` (its lists, counts and
 * answer), else its `answer` hashed, and the report's sections.
 */
export function digestOf(
  run: { name: string; slot: number; tenant: string },
  workflow: Workflow,
  report: ReportInput,
  markdown: string,
): RunDigest {
  const { job } = report;
  const own = workflow.digest?.(report) ?? {};
  return {
    version: 1,
    schedule: run.name,
    tenant: run.tenant,
    slot: run.slot,
    jobId: job.id,
    workflow: workflow.name,
    finishedAt: job.finishedAt,
    lists: own.lists ?? [],
    counts: own.counts ?? [],
    sections: reportSections(
      markdown,
      job.id,
      report.attachments.map((attachment) => attachment.fileName),
    ),
    answer: own.answer ?? answerDigest(workflow, report),
  };
}

/** The workflow's `answer` (a call's data), as JSON hashed. */
function answerDigest(workflow: Workflow, report: ReportInput): RunDigest['answer'] {
  const value = workflow.answer?.(report);
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  return { hash: digestHash(text), length: text.length, excerpt: shorten(text, 200) };
}

/** Compares a run with the previous one (none: the first run). */
export function compareDigests(
  current: RunDigest,
  previous: RunDigest | undefined,
  series: SeriesPoint[] = [],
): ScheduleChanges {
  const lists = current.lists.map((list) => {
    const before = previous?.lists.find((item) => item.kind === list.kind)?.entries ?? [];
    const had = new Set(before.map((entry) => entry.id));
    const has = new Set(list.entries.map((entry) => entry.id));
    return {
      kind: list.kind,
      added: previous ? list.entries.filter((entry) => !had.has(entry.id)) : [],
      removed: before.filter((entry) => !has.has(entry.id)),
      now: list.entries.length,
      before: before.length,
    };
  });
  const counts = current.counts.map((item) => {
    const before = previous?.counts.find((other) => other.name === item.name)?.value;
    return {
      name: item.name,
      before,
      now: item.value,
      delta: before === undefined ? undefined : item.value - before,
    };
  });
  const hadSections = new Map((previous?.sections ?? []).map((section) => [section.heading, section.hash]));
  const hasSections = new Set(current.sections.map((section) => section.heading));
  const sections = {
    added: previous ? current.sections.filter((s) => !hadSections.has(s.heading)).map((s) => s.heading) : [],
    removed: (previous?.sections ?? []).filter((s) => !hasSections.has(s.heading)).map((s) => s.heading),
    changed: current.sections
      .filter((s) => hadSections.has(s.heading) && hadSections.get(s.heading) !== s.hash)
      .map((s) => s.heading),
  };
  const answer =
    current.answer === undefined || previous === undefined
      ? undefined
      : previous.answer === undefined
        ? 'new'
        : previous.answer.hash === current.answer.hash
          ? 'unchanged'
          : 'changed';
  const unchanged =
    previous !== undefined &&
    lists.every((list) => list.added.length === 0 && list.removed.length === 0) &&
    counts.every((item) => item.delta === 0) &&
    sections.added.length + sections.removed.length + sections.changed.length === 0 &&
    (answer === undefined || answer === 'unchanged');
  return {
    schedule: current.schedule,
    first: previous === undefined,
    previous: previous && {
      jobId: previous.jobId,
      slot: new Date(previous.slot).toISOString(),
      finishedAt: previous.finishedAt === undefined ? undefined : new Date(previous.finishedAt).toISOString(),
    },
    unchanged,
    lists,
    counts,
    sections,
    answer,
    series:
      current.counts.length > 0
        ? current.counts.map((item) => ({
            name: item.name,
            points: series.map((point) => ({
              slot: new Date(point.slot).toISOString(),
              jobId: point.jobId,
              value: point.value,
            })),
          }))
        : undefined,
  };
}

const signed = (n: number) => (n > 0 ? `+${count(n)}` : n < 0 ? `−${count(-n)}` : '±0');

function entryList(title: string, entries: DigestEntry[]): string | undefined {
  if (entries.length === 0) return undefined;
  const shown = entries.slice(0, listedEntries).map((entry) => `- ${inline(entry.text || entry.id)}`);
  if (entries.length > listedEntries)
    shown.push(`- … and ${count(entries.length - listedEntries)} more (all of them in result.json)`);
  return `**${title}**\n\n${shown.join('\n')}`;
}

/** The heading of the section: "Changes since <previous run time>". */
export function changesHeading(changes: ScheduleChanges): string {
  return changes.previous
    ? `Changes since ${utc(Date.parse(changes.previous.slot))}`
    : 'Changes since the previous run';
}

/** The section in Markdown (level 2, starting with its heading). */
export function changesMarkdown(changes: ScheduleChanges): string {
  return blocks(
    changesOverview(changes),
    ...seriesMarkdown(changes).map((part) => part.join('\n\n')),
  ).trimEnd();
}

/** The section for report.html: the same, with each time series' chart (inline SVG) above its table. */
export function changesHtml(changes: ScheduleChanges): string {
  const series = seriesMarkdown(changes).map(([title, ...rest], index) =>
    [markdownToHtml(title!), changesCharts(changes)[index] ?? '', markdownToHtml(rest.join('\n\n'))].join(
      '\n',
    ),
  );
  return `<section class="schedule-changes">\n${markdownToHtml(changesOverview(changes))}${series.join('\n')}</section>`;
}

function changesOverview(changes: ScheduleChanges): string {
  const { previous } = changes;
  const intro = previous
    ? inline(
        `Compared with the previous run of schedule ${changes.schedule} (job ${previous.jobId}, scheduled ${utc(Date.parse(previous.slot))}${previous.finishedAt ? `, finished ${utc(Date.parse(previous.finishedAt))}` : ''}).`,
      )
    : inline(
        `This is the first run of schedule ${changes.schedule} (the first with a report): there is nothing to compare with yet. The next run's report says what changed since this one.`,
      );
  const overview: string[] = [];
  if (previous) {
    for (const list of changes.lists) {
      if (list.added.length + list.removed.length === 0) {
        if (list.now > 0 || list.before > 0)
          overview.push(`${cap(list.kind)}: unchanged (${count(list.now)}).`);
        continue;
      }
      overview.push(
        `${cap(list.kind)}: ${count(list.added.length)} new, ${count(list.removed.length)} dropped (${count(list.now)} now, ${count(list.before)} before).`,
      );
    }
    for (const item of changes.counts) {
      overview.push(
        item.before === undefined
          ? `${item.name}: ${count(item.now)} (the previous run counted another query).`
          : item.delta === 0
            ? `${item.name}: ${count(item.now)}, the same as in the previous run.`
            : `${item.name}: ${count(item.now)}, ${signed(item.delta ?? 0)} since the previous run (${count(item.before)}${item.before ? `; ${signed(Math.round(((item.delta ?? 0) / item.before) * 1000) / 10)} %` : ''}).`,
      );
    }
    const { added, removed, changed } = changes.sections;
    if (added.length + removed.length + changed.length > 0)
      overview.push(
        `Report sections: ${count(added.length)} new, ${count(changed.length)} changed, ${count(removed.length)} removed.`,
      );
    if (changes.answer === 'changed') overview.push('The answer changed.');
    if (changes.answer === 'unchanged') overview.push('The answer is the same as before.');
    if (changes.answer === 'new') overview.push('There is an answer now; the previous run had none.');
  }
  const lines = previous
    ? [
        changes.unchanged ? inline('Nothing changed since the previous run.') : undefined,
        overview.map((line) => `- ${inline(line)}`).join('\n'),
        ...changes.lists.flatMap((list) => [
          entryList(`New ${list.kind}`, list.added),
          entryList(`Dropped ${list.kind}`, list.removed),
        ]),
        entryList(
          'New sections',
          changes.sections.added.map((text) => ({ id: text, text })),
        ),
        entryList(
          'Changed sections',
          changes.sections.changed.map((text) => ({ id: text, text })),
        ),
        entryList(
          'Removed sections',
          changes.sections.removed.map((text) => ({ id: text, text })),
        ),
      ]
    : [];
  return blocks(heading(2, changesHeading(changes)), intro, ...lines).trimEnd();
}

const cap = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** Per time series: its heading, its table and a note (Markdown blocks). */
function seriesMarkdown(changes: ScheduleChanges): string[][] {
  return (changes.series ?? []).map((series) => {
    const rows = series.points.map((point, index) => {
      const before = series.points[index - 1];
      return [
        utc(Date.parse(point.slot)),
        count(point.value),
        before ? signed(point.value - before.value) : '—',
        point.jobId,
      ];
    });
    return [
      heading(3, `${series.name}: patent count over time`),
      table(['Run (scheduled)', 'Count', 'Change', 'Job'], rows.slice(-20).reverse()),
      series.points.length > 20
        ? inline(
            `The latest 20 of ${series.points.length} runs, newest first; all of them are in result.json.`,
          )
        : inline('Newest first.'),
    ];
  });
}

/** Charts (inline SVG) of the section, one per time series. */
export function changesCharts(changes: ScheduleChanges): string[] {
  return (changes.series ?? []).map((series) =>
    countSeriesChart({
      title: `${series.name}: patent count over time`,
      points: series.points.map((point) => ({ at: Date.parse(point.slot), value: point.value })),
    }),
  );
}

const digestPrefix = (tenant: string, name: string) =>
  `reports/schedules/${encodeURIComponent(tenant)}/${encodeURIComponent(name)}/`;
const digestKey = (digest: RunDigest) =>
  `${digestPrefix(digest.tenant, digest.schedule)}${new Date(digest.slot).toISOString().replace(/:/g, '-')}_${digest.jobId}.json`;
const slotOfKey = (key: string): number => {
  const match = /\/(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z)_[^/]+\.json$/.exec(key);
  return match ? Date.parse(match[1]!.replace(/T(\d\d)-(\d\d)-(\d\d)/, 'T$1:$2:$3')) : Number.NaN;
};

async function readDigest(reports: ReportStore, key: string): Promise<RunDigest | undefined> {
  const stored = await reports.get(key);
  if (!stored) return undefined;
  try {
    const digest = JSON.parse(Buffer.from(stored.body).toString('utf8')) as RunDigest;
    return digest.version === 1 ? digest : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The changes section of a scheduled job's report (undefined for a job no schedule created), and
 * the job's digest, kept for the next run. Called once the report's Markdown is rendered.
 */
export async function scheduleChanges(
  reports: ReportStore,
  workflow: Workflow,
  report: ReportInput,
  markdown: string,
): Promise<ScheduleChanges | undefined> {
  const run = scheduleRunOf(report.job);
  if (!run) return undefined;
  const digest = digestOf(run, workflow, report, markdown);
  const own = digestKey(digest);
  const earlier = (await reports.list(digestPrefix(run.tenant, run.name)))
    .filter((key) => key !== own && slotOfKey(key) < run.slot)
    .sort((a, b) => slotOfKey(a) - slotOfKey(b));
  let previous: RunDigest | undefined;
  for (let index = earlier.length - 1; index >= 0 && !previous; index--) {
    const candidate = await readDigest(reports, earlier[index]!);
    if (candidate && candidate.workflow === digest.workflow) previous = candidate;
  }
  let series: SeriesPoint[] = [];
  if (digest.counts.length > 0) {
    const name = digest.counts[0]!.name;
    for (const key of earlier.slice(-(seriesLength - 1))) {
      const other = key === (previous && digestKey(previous)) ? previous : await readDigest(reports, key);
      const value = other?.counts.find((item) => item.name === name)?.value;
      if (other && value !== undefined) series.push({ slot: other.slot, jobId: other.jobId, value });
    }
    series = [...series, { slot: digest.slot, jobId: digest.jobId, value: digest.counts[0]!.value }];
  }
  await reports.put(own, JSON.stringify(digest), 'application/json');
  return compareDigests(digest, previous, series);
}
