/**
 * What a job's input document said about itself (a disclosure form's docket id, title, inventors,
 * business unit, dates), kept with the job and never sent upstream: a line under a report's title,
 * a section of its facts, a field of result.json.
 */
import type { Job } from '../engine/job-record';
import { humanise, inline } from './markdown';

const order = [
  'docket',
  'title',
  'inventors',
  'businessUnit',
  'priorityDate',
  'filingDate',
  'submissionDate',
];
const names: Record<string, string> = {
  docket: 'Docket',
  title: 'Title',
  inventors: 'Inventors',
  businessUnit: 'Business unit',
  priorityDate: 'Priority date',
  filingDate: 'Filing date',
  submissionDate: 'Submitted',
};

/** The job's metadata fields in a stable order (known ones first), each with its name for people. */
export function disclosureEntries(job: Pick<Job, 'metadata'>): { name: string; value: string }[] {
  const metadata = job.metadata ?? {};
  const keys = [
    ...order.filter((key) => key in metadata),
    ...Object.keys(metadata).filter((key) => !order.includes(key)),
  ];
  return keys.map((key) => {
    const value = metadata[key];
    return {
      name: names[key] ?? humanise(key),
      value: Array.isArray(value) ? value.join(', ') : String(value),
    };
  });
}

/** "**Docket:** IDF-2026-0415 · **Inventors:** Jane Doe, John Roe · ..." or undefined without metadata. */
export function disclosureLine(job: Pick<Job, 'metadata'>): string | undefined {
  const entries = disclosureEntries(job);
  if (entries.length === 0) return undefined;
  return entries.map((entry) => `**${inline(entry.name)}:** ${inline(entry.value)}`).join(' · ');
}

/** The docket id of a job's form, if it had one. */
export function docketOf(job: Pick<Job, 'metadata'> | undefined): string | undefined {
  const docket = job?.metadata?.docket;
  return typeof docket === 'string' && docket !== '' ? docket : undefined;
}
