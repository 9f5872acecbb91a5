/**
 * One job as a table row, the same in every list (Jobs, a batch's jobs, a bulk action's count):
 * its title linked to its page with the sandbox tag, where it came from, then the columns the list
 * asks for. A list writes its heading with `jobColumns(...)`, so heading and cells never drift apart.
 */
import type { ComponentChildren } from 'preact';
import { choiceText } from './answers';
import { type Column, SandboxTag, StatusBadge, When } from './components';
import { formatDuration, jobDuration, jobTitle, stepTitle } from './format';
import { jobHref } from './routing';
import type { JobView, Settings } from './types';

/** What a row reads of a job: a job of `GET /jobs`, or a bulk action's sample. */
export interface RowJob {
  id: string;
  workflow: string;
  status: string;
  step: string;
  createdAt: string;
  tenant?: string | undefined;
  title?: string | undefined;
  label?: string | undefined;
  batchId?: string | undefined;
  source?: string | undefined;
  updatedAt?: string | undefined;
  finishedAt?: string | undefined;
  upstream?: JobView['upstream'] | undefined;
  usage?: { calls: number; billedUnits: number } | undefined;
  lastError?: { kind: string; message: string } | undefined;
  /** The option ids a waiting job offers (a bulk answer's sample). */
  options?: string[] | undefined;
  /** Their labels, in the same order. */
  optionLabels?: string[] | undefined;
}

/** The columns a list may show after the job's own cell. */
export type JobColumn =
  | 'workflow'
  | 'status'
  | 'step'
  | 'created'
  | 'updated'
  | 'took'
  | 'calls'
  | 'billed'
  | 'why';

const headings: Record<JobColumn, Column> = {
  workflow: 'Workflow',
  status: 'Status',
  step: 'Step',
  created: 'Created',
  updated: 'Updated',
  took: { label: 'Took', num: true },
  calls: { label: 'Calls', num: true },
  billed: { label: 'Billed units', num: true },
  why: 'Why it stopped',
};

/** The heading row's columns of a list of `columns`, after a hidden "Select" column when `select`. */
export function jobColumns(columns: readonly JobColumn[], select = false): Column[] {
  return [
    ...(select ? [{ label: 'Select', hidden: true }] : []),
    'Job',
    ...columns.map((column) => headings[column]),
  ];
}

/**
 * Why a job stopped, or what it offers, each option by its label with its id beside it:
 * "deadline: the job ran past its deadline", "offers Hinge (f1), Magnet (f2)".
 */
function reasonOf(job: RowJob): string {
  if (job.lastError) return `${job.lastError.kind}: ${job.lastError.message}`;
  if (job.options) return `offers ${choiceText({ options: job.options, labels: job.optionLabels })}`;
  return '';
}

function cell(config: Settings, job: RowJob, column: JobColumn) {
  switch (column) {
    case 'workflow':
      return <td class="nowrap">{job.workflow}</td>;
    case 'status':
      return (
        <td>
          <StatusBadge status={job.status} />
        </td>
      );
    case 'step':
      return <td>{stepTitle(config.workflowDocs, job.workflow, job.step)}</td>;
    case 'created':
      return (
        <td class="nowrap">
          <When at={job.createdAt} />
        </td>
      );
    case 'updated':
      return (
        <td class="nowrap">
          <When at={job.updatedAt} />
        </td>
      );
    case 'took':
      return <td class="num nowrap">{formatDuration(jobDuration(job))}</td>;
    case 'calls':
      return <td class="num">{(job.usage?.calls ?? 0).toLocaleString()}</td>;
    case 'billed':
      return <td class="num">{(job.usage?.billedUnits ?? 0).toLocaleString()}</td>;
    case 'why':
      return <td>{reasonOf(job)}</td>;
  }
}

/**
 * The `columns` in one line ("Succeeded step count · 3 calls · 12 billed units · updated …"): what a list
 * whose other columns a phone's width hides shows under the job's title instead (`narrow-only`).
 */
function underTitle(config: Settings, job: RowJob, columns: readonly JobColumn[]) {
  const parts: ComponentChildren[] = columns.map((column) => {
    switch (column) {
      case 'status':
        return <StatusBadge status={job.status} />;
      case 'step':
        return `step ${stepTitle(config.workflowDocs, job.workflow, job.step)}`;
      case 'calls':
        return `${(job.usage?.calls ?? 0).toLocaleString()} calls`;
      case 'billed':
        return `${(job.usage?.billedUnits ?? 0).toLocaleString()} billed units`;
      case 'updated':
        return job.updatedAt ? (
          <>
            updated <When at={job.updatedAt} />
          </>
        ) : null;
      case 'created':
        return (
          <>
            created <When at={job.createdAt} />
          </>
        );
      case 'took':
        return `took ${formatDuration(jobDuration(job))}`;
      default:
        return null;
    }
  });
  const shown = parts.filter((part) => part !== null);
  return (
    <span class="sub narrow-only">
      {shown.flatMap((part, index) =>
        index === 0 ? [part] : [index === 1 && columns[0] === 'status' ? ' ' : ' · ', part],
      )}
    </span>
  );
}

/**
 * A job's row: an optional first cell (`select`: a checkbox), the job's cell (title, sandbox tag,
 * label, why it stopped unless a `why` column says it, and where it came from), then `columns`.
 * `inBatch` leaves out the batch, which the page already names. `underOnPhone`: columns also said
 * in a line under the title, shown only where the list's CSS hides their own cells (a phone).
 */
export function JobRow(props: {
  config: Settings;
  job: RowJob;
  columns: readonly JobColumn[];
  select?: ComponentChildren;
  inBatch?: boolean;
  underOnPhone?: readonly JobColumn[];
}) {
  const { config, job, columns, select, inBatch, underOnPhone } = props;
  const title = jobTitle(job);
  const origin = [
    job.source,
    job.tenant && job.tenant !== 'default' ? `tenant ${job.tenant}` : '',
    job.batchId && !inBatch ? `batch ${job.batchId}` : '',
  ].filter(Boolean);
  return (
    <tr key={job.id} data-job={job.id} data-status={job.status}>
      {select !== undefined ? <td>{select}</td> : null}
      <td>
        <a href={jobHref(job.id)}>{title}</a>
        <SandboxTag job={job} />
        {job.label && job.label !== title ? <span class="sub">{job.label}</span> : null}
        {job.lastError && !columns.includes('why') ? <span class="sub">{job.lastError.message}</span> : null}
        {origin.length ? <span class="sub">{origin.join(' · ')}</span> : null}
        {underOnPhone?.length ? underTitle(config, job, underOnPhone) : null}
      </td>
      {columns.map((column) => cell(config, job, column))}
    </tr>
  );
}
