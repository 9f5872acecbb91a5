/**
 * How the `opflow` command shows jobs to people (plain text) and to scripts (`--json`).
 */
import { findStep } from '../engine/advance';
import type { Job } from '../engine/job-record';
import { retryStep } from '../engine/retry';
import { describeUpstreamIdentity } from '../engine/upstream-identity';
import type { WorkflowRegistry } from '../engine/workflow';

/**
 * Characters a terminal acts on rather than shows: C0 and C1 controls (escape sequences that move the
 * cursor, recolour, retitle the window or hide text), DEL, and the Unicode marks that reorder or
 * break lines (bidirectional overrides and isolates, line and paragraph separators).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const unprintable = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from outside (a label, a pause reason, an upstream message, a URL) as a terminal may print
 * it: every control character written as its escape (`\x1b`, `\n`, `\u202e`), so that what is
 * shown is what was sent, on one line. `--json` output needs none of this (JSON escapes them).
 */
export function printable(text: string): string {
  return text.replace(unprintable, (char) => {
    const named = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }[char];
    if (named) return named;
    const code = char.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** What `list --json` and `run --json` give per job. */
export interface JobSummary {
  id: string;
  workflow: string;
  label?: string | undefined;
  tenant: string;
  /** Which upstream served the job (`{kind: 'sandbox'}`: simulated data); absent before its first call. */
  upstream?: Job['upstream'];
  status: Job['status'];
  step: string;
  createdAt: string;
  updatedAt: string;
  finishedAt?: string | undefined;
  error?: Job['lastError'];
  pending?: Job['pending'];
  usage: Job['usage'];
  /** Messages sent to move the job on (its runaway guard counts them against a budget). */
  messages: number;
  /** Where the readable report is, once there is one. */
  report?: string | undefined;
  /** Earlier runs when the job was retried (`opflow retry`), oldest first. */
  runs?: RunSummary[] | undefined;
}

export interface RunSummary {
  status: 'FAILED' | 'CANCELLED';
  step: string;
  error?: Job['lastError'];
  finishedAt?: string | undefined;
  retriedAt: string;
  retriedFrom: string;
  fromStart: boolean;
}

/** The time as ISO 8601; a time no Date can hold (a record written before deadlines were bounded) as its number. */
const iso = (ms: number | undefined) => {
  if (ms === undefined) return undefined;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${ms} (ms since 1970, beyond the calendar)` : date.toISOString();
};

export function jobSummary(job: Job, report?: string): JobSummary {
  return {
    id: job.id,
    workflow: job.workflow,
    label: job.label,
    tenant: job.tenant,
    upstream: job.upstream,
    status: job.status,
    step: job.step,
    createdAt: iso(job.createdAt)!,
    updatedAt: iso(job.updatedAt)!,
    finishedAt: iso(job.finishedAt),
    error: job.status === 'FAILED' || job.status === 'CANCELLED' ? job.lastError : undefined,
    pending: job.status === 'AWAITING_INPUT' ? job.pending : undefined,
    usage: job.usage,
    messages: job.messages ?? 0,
    report,
    runs: job.runs?.map((run) => ({
      status: run.status,
      step: run.step,
      error: run.error,
      finishedAt: iso(run.finishedAt),
      retriedAt: iso(run.retriedAt)!,
      retriedFrom: run.retriedFrom,
      fromStart: run.fromStart,
    })),
  };
}

/** The step's title for displays ("agent search"), else its name. */
export function stepTitle(job: Pick<Job, 'workflow' | 'step'>, workflows: WorkflowRegistry): string {
  const workflow = workflows.get(job.workflow);
  const step = workflow ? findStep(workflow, job.step) : undefined;
  return step?.title ?? job.step;
}

/** One line: what a job is doing now. */
export function jobLine(job: Job, workflows: WorkflowRegistry): string {
  return printable(rawJobLine(job, workflows));
}

function rawJobLine(job: Job, workflows: WorkflowRegistry): string {
  const name = job.label ?? job.id;
  switch (job.status) {
    case 'SUCCEEDED':
      return `${name}: done`;
    case 'FAILED':
      return `${name}: failed at ${job.lastError?.step ?? job.step}: ${job.lastError?.message ?? 'unknown error'}`;
    case 'CANCELLED':
      return `${name}: cancelled`;
    case 'AWAITING_INPUT':
      return `${name}: waiting for a selection (${job.pending?.prompt ?? job.step})`;
    case 'WAITING':
      return `${name}: ${stepTitle(job, workflows)}, waiting for the platform`;
    default:
      return `${name}: ${stepTitle(job, workflows)}${job.attempts > 0 ? ` (retry ${job.attempts})` : ''}`;
  }
}

/** `1 item`, `2 items`: a count with its noun, plural unless 1 (`plural` for nouns that differ). */
export function countOf(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 90) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 90) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The options of a job awaiting a selection, and the command that answers it. */
export function selectionHelp(job: Job): string {
  const pending = job.pending;
  if (!pending) return `job ${job.id} is not waiting for a selection (it is ${job.status})`;
  const width = Math.max(...pending.options.map((option) => option.id.length), 2);
  const lines = [
    `${printable(job.label ?? job.id)} waits for a selection: ${printable(pending.prompt)}`,
    `  choose ${pending.min === pending.max ? pending.min : `${pending.min} to ${pending.max}`} of:`,
    ...pending.options.map(
      (option) =>
        `    ${printable(option.id).padEnd(width)}  ${printable(option.label)}${option.preselected ? '  (suggested)' : ''}${
          option.detail ? `\n    ${' '.repeat(width)}  ${printable(option.detail)}` : ''
        }`,
    ),
  ];
  const suggested = pending.options.filter((option) => option.preselected).map((option) => option.id);
  const example = (
    suggested.length > 0 ? suggested : pending.options.slice(0, pending.min).map((o) => o.id)
  ).join(',');
  lines.push(`  answer with: opflow resume ${job.id} --select ${printable(example)}`);
  return lines.join('\n');
}

/** Everything about one job, for `opflow status`. */
export function describeJob(job: Job, workflows: WorkflowRegistry, report?: string): string {
  const lines = [
    `job       ${job.id}`,
    `workflow  ${job.workflow} (version ${job.workflowVersion})`,
    ...(job.label ? [`label     ${printable(job.label)}`] : []),
    `tenant    ${job.tenant}`,
    `upstream  ${describeUpstreamIdentity(job.upstream)}`,
    `status    ${job.status}`,
    `step      ${stepTitle(job, workflows)}${job.attempts > 0 ? ` (attempt ${job.attempts + 1})` : ''}`,
    `created   ${iso(job.createdAt)}`,
    `updated   ${iso(job.updatedAt)}`,
  ];
  if (job.finishedAt !== undefined) {
    lines.push(`finished  ${iso(job.finishedAt)} (took ${formatDuration(job.finishedAt - job.createdAt)})`);
  } else {
    lines.push(`deadline  ${iso(job.deadlineAt)}`);
  }
  const u = job.usage;
  lines.push(
    `usage     ${u.calls} calls (${u.failedCalls} failed, ${u.throttledCalls} throttled), ${u.billedUnits} billed units, ${u.tokens} tokens, ${formatDuration(u.callMs)} in calls${
      u.duplicateCreates > 0 ? `, ${u.duplicateCreates} repeated creates` : ''
    }${(u.duplicateReads ?? 0) > 0 ? `, ${u.duplicateReads} repeated reads` : ''}${u.taskCost !== undefined ? `, platform task_cost ${u.taskCost} s` : ''}`,
    `messages  ${job.messages ?? 0} sent to move the job on`,
  );
  if ((job.recreatedTasks ?? 0) > 0) {
    const n = job.recreatedTasks!;
    lines.push(
      `recreated ${n} upstream task${n === 1 ? '' : 's'} the platform no longer knew ("task not found"), from the step that created ${n === 1 ? 'it' : 'them'}: a paid repeat, counted in its repeated creates`,
    );
  }
  if (job.lastError) {
    const e = job.lastError;
    const where = [
      `step ${e.step}`,
      ...(e.operationId ? [`operation ${e.operationId}`] : []),
      `kind ${e.kind}`,
      ...(e.code !== undefined ? [`code ${e.code}`] : []),
      ...(e.httpStatus !== undefined ? [`HTTP ${e.httpStatus}`] : []),
      ...(e.correlationId ? [`correlation id ${printable(e.correlationId)}`] : []),
    ].join(', ');
    lines.push(
      `${job.status === 'FAILED' ? 'error' : 'retrying'}`.padEnd(10) + printable(e.message),
      `          ${where}; ${retryAdvice(job, workflows)}`,
    );
  }
  for (const [index, run] of (job.runs ?? []).entries()) {
    lines.push(
      `run ${index + 1}`.padEnd(10) +
        `${run.status} at ${run.step}${run.error ? `: ${printable(run.error.message)}` : ''}; retried ${iso(run.retriedAt)} from ${
          run.fromStart ? 'the start' : run.retriedFrom
        }`,
    );
  }
  if (report) lines.push(`report    ${report}`);
  if (job.status === 'AWAITING_INPUT') lines.push('', selectionHelp(job));
  return lines.join('\n');
}

/** A short name of the upstream for tables: "sandbox", "connect.patsnap.com 3f2a9c1d", or "-" before the first call. */
export function upstreamShort(upstream: Job['upstream']): string {
  if (!upstream) return '-';
  if (upstream.kind === 'sandbox') return 'sandbox';
  let host = upstream.baseUrl;
  try {
    host = new URL(upstream.baseUrl).host;
  } catch {}
  return `${host} ${upstream.keyFingerprint.slice(0, 8)}`;
}

/** A plain text table with left-aligned columns; control characters in cells are escaped. */
export function formatTable(headers: string[], rawRows: string[][]): string {
  // Cells may hold text from outside (labels, reasons): shown escaped, and so on one line.
  const rows = rawRows.map((row) => row.map(printable));
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/**
 * Whether running the job again could help, and how, in words: a deadline failure is helped by a
 * longer one; a task the platform failed or no longer knows is created again by a retry (a counted
 * paid repeat); a job of a batch can be run again with the batch's redrive too.
 */
function retryAdvice(job: Job, workflows: WorkflowRegistry): string {
  const error = job.lastError!;
  const batch = job.batchId === undefined ? '' : ` (or with its batch: opflow batch ${job.batchId} --redrive`;
  if (error.kind === 'deadline')
    return `opflow retry ${job.id} runs it again with a new deadline (--deadline 2h sets it, default as long as it had; --from-start starts it over)${batch ? `${batch} --deadline 2h)` : ''}`;
  const workflow = workflows.get(job.workflow);
  const from = workflow && job.status === 'FAILED' ? retryStep(workflow, job) : job.step;
  if (from !== job.step)
    return `opflow retry ${job.id} creates its upstream task again from step "${from}" (a paid repeat, counted in its usage)${batch ? `${batch})` : ''}`;
  return error.retryable ? 'a retry could help' : 'a retry would not help';
}
