/**
 * `opflow run <workflow> <inputs...>`: one job per input document, then wait and show progress.
 * An input already done by a succeeded job of the same workflow, for the same tenant on the same
 * upstream (the sandbox, or the same base URL and key), is skipped (unless --fresh), and one that
 * has an unfinished job joins that job instead of starting the work again. Unfinished
 * jobs of other inputs are left to `opflow resume` (the run says so).
 */

import { ulid } from 'ulid';
import type { DisclosureFormConfig } from '../../config/disclosure-form-config';
import { JobRequestError, maxDeadlineMs, submitJob } from '../../engine/job-commands';
import { type Job, type JobPriority, jobPriorities, jobPrioritySchema } from '../../engine/job-record';
import {
  describeUpstreamIdentity,
  sameUpstream,
  type UpstreamIdentity,
  upstreamOfTenant,
} from '../../engine/upstream-identity';
import type { Workflow } from '../../engine/workflow';
import { errorMessage } from '../../errors/error-message';
import {
  type DisclosureMetadata,
  disclosureInput,
  disclosureLabel,
  loadDisclosureParsers,
} from '../../ingest/disclosure-form';
import { closestName } from '../../openplatform/closest-name';
import type { Backend } from '../../runtime/backend';
import { listAll, listUnfinished } from '../../runtime/job-queries';
import { type CliContext, type GlobalOptions, openBackend } from '../context';
import { driveJobs, reportOutcome } from '../drive-jobs';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { type InputDocument, type InputProblem, readInputs } from '../inputs';
import { readConfigFile } from '../serve-extras';
import { checkStreamChoice, printStreamedAnswer } from '../stream-answer';

export interface RunOptions extends GlobalOptions {
  select: string;
  deadline?: string | undefined;
  tenant: string;
  /** Start new jobs even for inputs that are done or have an unfinished job already. */
  fresh?: boolean | undefined;
  /** Submit and return at once, without waiting. */
  wait: boolean;
  priority?: string | undefined;
  maxUnits?: string | undefined;
  /** `name=value` input fields added to every input (`--set patent=EU0040356240003S`). */
  set?: string[] | undefined;
  /** Print the streamed answer as it arrives (`--stream`; default: on a terminal). */
  stream?: boolean | undefined;
}

interface Candidate {
  source: string;
  label: string;
  input: unknown;
  /** A disclosure form's fields, kept with the job and never sent upstream. */
  metadata?: DisclosureMetadata | undefined;
}

export async function runCommand(
  ctx: CliContext,
  workflowName: string,
  sources: string[],
  options: RunOptions,
): Promise<ExitCodeValue> {
  const startedAt = Date.now();
  const workflow = requireWorkflow(ctx, workflowName);
  checkStreamChoice(workflow, options);
  const settings = parseRunSettings(options);
  const { candidates, refused } = await gatherCandidates(ctx, workflow, sources, settings.fields);
  const backend = await openBackend(ctx, options, 'work');
  try {
    const earlier = await findEarlierJobs(backend, workflow, options);
    const submitted = await submitCandidates(ctx, backend, workflow, candidates, earlier, settings, refused);
    tellAboutEarlierWork(ctx, options, earlier, submitted);
    const { tracked, skipped } = submitted;
    if (tracked.length === 0) {
      throw new CliError(
        `no job could be started: ${refused.map((problem) => `${problem.source}: ${problem.reason}`).join('; ')}`,
        ExitCode.usage,
      );
    }
    const stopStream = options.wait
      ? printStreamedAnswer(ctx, backend, workflow, tracked, options)
      : undefined;
    const outcome = options.wait
      ? await driveJobs(ctx, backend, tracked, {
          ...options,
          plainProgress: stopStream !== undefined,
        }).finally(stopStream)
      : { jobs: tracked, interrupted: false };
    return await reportOutcome(ctx, backend, outcome, { ...options, refused, skipped, startedAt });
  } finally {
    await backend.close();
  }
}

/** The run's flags, read and checked before anything is opened. */
interface RunSettings {
  tenant: string;
  selection: 'auto' | 'manual';
  priority: JobPriority | undefined;
  maxUnits: number | undefined;
  deadlineMs: number | undefined;
  fields: Record<string, unknown>;
}

function parseRunSettings(options: RunOptions): RunSettings {
  return {
    tenant: options.tenant,
    selection: parseSelectionMode(options.select),
    priority: options.priority === undefined ? undefined : parsePriority(options.priority),
    maxUnits: parseMaxUnits(options.maxUnits),
    deadlineMs:
      options.deadline === undefined
        ? undefined
        : parseDuration(options.deadline, '--deadline', { maxMs: maxDeadlineMs, maxText: '366d' }),
    fields: parseSetFields(options.set ?? []),
  };
}

/**
 * The workflow inputs the sources give, and the sources refused (each said on stderr). No usable
 * input at all is a usage error that names every refusal.
 */
async function gatherCandidates(
  ctx: CliContext,
  workflow: Workflow,
  sources: string[],
  fields: Record<string, unknown>,
): Promise<{ candidates: Candidate[]; refused: InputProblem[] }> {
  const { documents, problems, skipped } = await readInputs(sources, {
    readStdin: ctx.io.readStdin,
    cwd: ctx.io.cwd,
    images: workflow.fromImage !== undefined,
  });
  if (skipped.length > 0) {
    ctx.io.stderr.write(
      `opflow: not inputs (only .md, .txt, .json, .docx and .pdf files are read): ${skipped.join(', ')}\n`,
    );
  }
  const refused: InputProblem[] = [...problems];
  const candidates: Candidate[] = [];
  const hasText = documents.some((document) => document.kind !== 'json' && document.kind !== 'image');
  const formConfig = hasText ? (await readConfigFile(ctx, undefined)).config.disclosureForm : undefined;
  if (hasText) await loadDisclosureParsers();
  for (const document of documents) {
    const built = candidatesOf(workflow, document, formConfig, (warning) =>
      ctx.io.stderr.write(`opflow: ${document.source}: ${warning}\n`),
    );
    if ('reason' in built) refused.push(built);
    else candidates.push(...built.map((candidate) => withFields(candidate, fields)));
  }
  for (const problem of refused)
    ctx.io.stderr.write(`opflow: skipping ${problem.source}: ${problem.reason}\n`);
  if (candidates.length === 0) {
    throw new CliError(
      refused.length > 0
        ? `none of the inputs can be used: ${refused.map((problem) => `${problem.source}: ${problem.reason}`).join('; ')}`
        : 'no inputs given',
      ExitCode.usage,
    );
  }
  return { candidates, refused };
}

/** Jobs of earlier runs that a candidate may repeat or join, by canonical input. */
interface EarlierJobs {
  unfinished: Job[];
  upstream: UpstreamIdentity | undefined;
  /** Succeeded on this upstream: the input is skipped. */
  canonicalOfDone: Map<string, Job>;
  /** Succeeded on another upstream: run again, and said so. */
  doneElsewhere: Map<string, Job>;
  /** Unfinished, same workflow, tenant and upstream: joined. */
  canonicalOfUnfinished: Map<string, Job>;
}

async function findEarlierJobs(
  backend: Backend,
  workflow: Workflow,
  options: RunOptions,
): Promise<EarlierJobs> {
  const unfinished = await listUnfinished(backend.deps.store);
  // A repeat is the same input for the same tenant on the same upstream: a result of the sandbox
  // is never taken for the platform's, nor one of another key, endpoint or tenant.
  const upstream = await upstreamOfTenant(backend.deps, options.tenant);
  const sameWorkflow = options.fresh
    ? []
    : unfinished.filter(
        (job) =>
          job.workflow === workflow.name &&
          job.tenant === options.tenant &&
          (job.upstream === undefined || sameUpstream(job.upstream, upstream)),
      );
  // Inputs already done by a succeeded job of this workflow are skipped unless --fresh.
  const canonicalOfDone = new Map<string, Job>();
  const doneElsewhere = new Map<string, Job>();
  if (!options.fresh) {
    for (const job of await listAll(backend.deps.store, { status: 'SUCCEEDED' })) {
      if (job.workflow !== workflow.name || job.tenant !== options.tenant) continue;
      const canonical = await canonicalInputOf(backend.deps.reports, job);
      if (canonical === undefined) continue;
      const into = sameUpstream(job.upstream, upstream) ? canonicalOfDone : doneElsewhere;
      if (!into.has(canonical)) into.set(canonical, job);
    }
  }
  const canonicalOfUnfinished = new Map<string, Job>();
  for (const job of sameWorkflow) {
    const canonical = await canonicalInputOf(backend.deps.reports, job);
    if (canonical !== undefined && !canonicalOfUnfinished.has(canonical))
      canonicalOfUnfinished.set(canonical, job);
  }
  return { unfinished, upstream, canonicalOfDone, doneElsewhere, canonicalOfUnfinished };
}

/** What became of the candidates: the jobs the run follows, and the repeats it found. */
interface Submitted {
  tracked: Job[];
  joined: number;
  skipped: { source: string; jobId: string }[];
  redone: { source: string; job: Job }[];
}

/**
 * Each candidate skipped (done before), joined (unfinished before) or submitted as a new job of
 * one batch. A request the engine refuses is added to `refused` and said, and the rest go on.
 */
async function submitCandidates(
  ctx: CliContext,
  backend: Backend,
  workflow: Workflow,
  candidates: Candidate[],
  earlier: EarlierJobs,
  settings: RunSettings,
  refused: InputProblem[],
): Promise<Submitted> {
  const batchId = `run-${ulid()}`;
  const submitted: Submitted = { tracked: [], joined: 0, skipped: [], redone: [] };
  const { tracked } = submitted;
  for (const candidate of candidates) {
    const parsed = workflow.input.safeParse(candidate.input);
    const canonical = parsed.success ? JSON.stringify(parsed.data) : undefined;
    const done = canonical === undefined ? undefined : earlier.canonicalOfDone.get(canonical);
    if (done) {
      submitted.skipped.push({ source: candidate.source, jobId: done.id });
      if (!tracked.some((job) => job.id === done.id)) tracked.push(done);
      continue;
    }
    const elsewhere = canonical === undefined ? undefined : earlier.doneElsewhere.get(canonical);
    if (elsewhere) submitted.redone.push({ source: candidate.source, job: elsewhere });
    const existing = canonical === undefined ? undefined : earlier.canonicalOfUnfinished.get(canonical);
    if (existing && !tracked.some((job) => job.id === existing.id)) {
      tracked.push(existing);
      submitted.joined += 1;
      continue;
    }
    try {
      const { job } = await submitJob(backend.deps, {
        workflow: workflow.name,
        input: candidate.input,
        tenant: settings.tenant,
        selection: { mode: settings.selection },
        deadlineMs: settings.deadlineMs,
        label: candidate.label.slice(0, 200),
        metadata: candidate.metadata,
        batchId,
        priority: settings.priority,
        maxUnits: settings.maxUnits,
        source: 'cli',
      });
      tracked.push(job);
    } catch (error) {
      if (!(error instanceof JobRequestError)) throw error;
      const problem = { source: candidate.source, reason: error.message };
      refused.push(problem);
      ctx.io.stderr.write(`opflow: skipping ${problem.source}: ${problem.reason}\n`);
    }
  }
  return submitted;
}

/** Says (unless --quiet) which inputs were done before, run again, joined, or left to resume. */
function tellAboutEarlierWork(
  ctx: CliContext,
  options: RunOptions,
  earlier: EarlierJobs,
  { tracked, joined, skipped, redone }: Submitted,
): void {
  if (options.quiet) return;
  const say = (line: string) => ctx.io.stderr.write(`opflow: ${line}\n`);
  if (skipped.length > 0) {
    say(
      `${skipped.length} input${skipped.length === 1 ? ' is' : 's are'} already done, not run again (--fresh runs ${skipped.length === 1 ? 'it' : 'them'} again): ${skipped
        .map((skip) => `${skip.source} (job ${skip.jobId})`)
        .join(', ')}`,
    );
  }
  if (redone.length > 0) {
    say(
      `done before on another upstream, so run now on ${describeUpstreamIdentity(earlier.upstream)}: ${redone
        .map(
          (entry) => `${entry.source} (job ${entry.job.id}, ${describeUpstreamIdentity(entry.job.upstream)})`,
        )
        .join(', ')}`,
    );
  }
  if (joined > 0) {
    say(
      `continuing ${joined} unfinished job${joined === 1 ? '' : 's'} from an earlier run (the same input${joined === 1 ? '' : 's'})`,
    );
  }
  // A run shows and waits for its own jobs only; others are `opflow resume`'s.
  const others = earlier.unfinished.filter((job) => !tracked.some((mine) => mine.id === job.id));
  if (others.length > 0) {
    say(
      `${others.length} unfinished job${others.length === 1 ? '' : 's'} of earlier runs ${others.length === 1 ? 'is' : 'are'} not part of this run; opflow resume continues ${others.length === 1 ? 'it' : 'them'}`,
    );
  }
}

/** The workflow by name, or a usage error that lists the known ones (closest first). */
export function requireWorkflow(ctx: CliContext, name: string): Workflow {
  const workflow = ctx.workflows.get(name);
  if (workflow) return workflow;
  const known = [...ctx.workflows.keys()].sort();
  // A typo (a few edits away) or a part of the name: the nearest one.
  const closest = closestName(name, known);
  throw new CliError(
    `unknown workflow "${name}"${closest ? ` (did you mean ${closest}?)` : ''}; known workflows: ${known.join(', ')}`,
    ExitCode.usage,
  );
}

/** `--max-units`: a whole number of billed units from 1, or undefined when not given. */
export function parseMaxUnits(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < 1 || number > 1e12)
    throw new CliError(
      `--max-units must be a whole number from 1 to 1000000000000, not "${value}"`,
      ExitCode.usage,
    );
  return number;
}

/** `--priority`: high, normal or low (jobPriorities). */
export function parsePriority(value: string): JobPriority {
  const parsed = jobPrioritySchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new CliError(`--priority must be one of ${jobPriorities.join(', ')}, not "${value}"`, ExitCode.usage);
}

export function parseSelectionMode(value: string): 'auto' | 'manual' {
  if (value === 'auto' || value === 'manual') return value;
  throw new CliError(`--select must be auto or manual, not "${value}"`, ExitCode.usage);
}

/** `90s`, `30m`, `2h`, `1d`, `1500ms` → milliseconds. */
export function parseDuration(
  value: string,
  option: string,
  limit: { maxMs: number; maxText: string } = { maxMs: Number.MAX_SAFE_INTEGER, maxText: '' },
): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(value);
  const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const amount = match ? Number(match[1]) * (units[match[2] ?? ''] ?? Number.NaN) : Number.NaN;
  if (!(amount >= 1)) {
    throw new CliError(
      `${option} must be a duration such as 90s, 30m, 2h or 1d, not "${value}"`,
      ExitCode.usage,
    );
  }
  if (amount > limit.maxMs) {
    throw new CliError(`${option} may be at most ${limit.maxText}, not "${value}"`, ExitCode.usage);
  }
  return Math.round(amount);
}

/** The workflow inputs one document gives: text through the workflow's reader, JSON as it is. */
function candidatesOf(
  workflow: Workflow,
  document: InputDocument,
  formConfig: DisclosureFormConfig | undefined,
  warn: (warning: string) => void,
): Candidate[] | InputProblem {
  if (document.kind === 'image') {
    if (!workflow.fromImage) return { source: document.source, reason: `${workflow.name} takes no images` };
    const input = workflow.fromImage(document.bytes ?? new Uint8Array(), document.fileName);
    return [{ source: document.source, label: document.fileName, input }];
  }
  if (document.kind === 'json') {
    const values = Array.isArray(document.json) ? document.json : [document.json];
    if (values.length === 0) return { source: document.source, reason: 'the JSON array is empty' };
    return values.map((input, index) => ({
      source: values.length > 1 ? `${document.source}[${index}]` : document.source,
      label: values.length > 1 ? `${document.fileName}[${index}]` : document.fileName,
      input,
    }));
  }
  if (!workflow.fromText) {
    return {
      source: document.source,
      reason: `${workflow.name} takes JSON input (a .json file), not text`,
    };
  }
  try {
    // A disclosure form's front matter (docket, inventors, dates...) stays with the job.
    const read = disclosureInput(workflow, document.content, document.fileName, formConfig);
    for (const warning of read.warnings) warn(warning);
    return [
      {
        source: document.source,
        label: disclosureLabel(document.fileName, read.metadata),
        input: read.input,
        metadata: read.metadata,
      },
    ];
  } catch (error) {
    return { source: document.source, reason: errorMessage(error) };
  }
}

/**
 * `--set name=value` pairs as input fields: a value that reads as JSON (a number, a list, an object)
 * is taken as that, any other as text.
 */
export function parseSetFields(pairs: readonly string[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CliError(`--set: expected field=value, got "${pair}"`, ExitCode.usage);
    const value = pair.slice(at + 1);
    let parsed: unknown = value;
    if (/^\s*[[{\d"-]|^(true|false|null)$/.test(value)) {
      try {
        parsed = JSON.parse(value);
      } catch {
        parsed = value;
      }
    }
    fields[pair.slice(0, at).trim()] = parsed;
  }
  return fields;
}

/** The candidate with `--set` fields added (they win over a file's own). */
function withFields(candidate: Candidate, fields: Record<string, unknown>): Candidate {
  if (Object.keys(fields).length === 0) return candidate;
  const input = candidate.input;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return candidate;
  return { ...candidate, input: { ...(input as Record<string, unknown>), ...fields } };
}

/** The job's input as canonical JSON (as the workflow's schema produced it), to recognise a repeat. */
async function canonicalInputOf(
  reports: { get(key: string): Promise<{ body: Uint8Array } | undefined> },
  job: Job,
): Promise<string | undefined> {
  if ('inline' in job.input) return JSON.stringify(job.input.inline);
  const stored = await reports.get(job.input.ref);
  return stored ? JSON.stringify(JSON.parse(Buffer.from(stored.body).toString('utf8'))) : undefined;
}
