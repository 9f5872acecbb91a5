/**
 * Bulk actions by filter across jobs: retry, redrive, cancel, or answer a selection of every job a
 * filter selects. Two calls: a dry run counts the jobs (and lists a sample) with a digest of their
 * ids, `selection`; the real call sends back that count and selection and is refused when the set
 * changed meanwhile. Each job's change is one versioned commit through the engine at the version
 * it was selected at: a job changed since (or acted on by another process) is skipped and
 * reported, never acted on twice. Jobs are read page by page from the store (never all at once)
 * and a call stops after `budgetMs` with a cursor to go on from (an HTTP API has 30 s).
 */
import { createHash } from 'node:crypto';
import type { JobDeps } from '../engine/deps';
import { answerSelection, cancelJob, JobRequestError } from '../engine/job-commands';
import type { Job, JobStatus, PendingSelection } from '../engine/job-record';
import { retryJob } from '../engine/retry';
import { reopenBatch } from '../ingest/redrive';
import { type BulkRequest, bulkMatcher, statusesToRead } from './bulk-request';

/** One job of a dry run's sample. */
export interface BulkSample {
  id: string;
  workflow: string;
  status: JobStatus;
  step: string;
  tenant: string;
  label?: string | undefined;
  batchId?: string | undefined;
  createdAt: number;
  error?: { kind: string; message: string } | undefined;
  /** answer: the ids of the options the job offers. */
  options?: string[] | undefined;
  /** answer: their labels, in the same order (what a person reads). */
  optionLabels?: string[] | undefined;
}

interface BulkEcho {
  action: BulkRequest['action'];
  where: BulkRequest['where'];
  options: BulkRequest['options'];
}

/** A dry run: what the action would change, changing nothing. */
export interface BulkPreview extends BulkEcho {
  dryRun: true;
  /** The jobs the action would act on now. */
  count: number;
  /** A digest of their ids (order-free): the real call sends it back with `count`. */
  selection: string;
  /** The statuses read (the action's, narrowed by the filter). */
  statuses: JobStatus[];
  sample: BulkSample[];
}

/** What a real call did (`done` and `skipped` count every call of the run so far). */
export interface BulkOutcome extends BulkEcho {
  dryRun: false;
  /** The count confirmed (the dry run's). */
  count: number;
  done: number;
  skipped: number;
  /** Ids acted on in this call (the first 20). */
  doneSample: string[];
  /** Jobs skipped in this call and why (the first 50): changed since selected, refused. */
  skippedSample: { jobId: string; reason: string }[];
  /** redrive: the batches that run again (this call's). */
  batches: string[];
  /** More to do: the same request with this cursor goes on. */
  cursor?: string | undefined;
}

/** The set a dry run counted is not the set there is now: look again before acting. */
export class BulkSelectionChanged extends JobRequestError {
  constructor(
    readonly preview: BulkPreview,
    confirmed: { count: number },
  ) {
    super(
      `the selection changed since the dry run: ${preview.count} jobs match now (the dry run counted ${confirmed.count}); look at the new dry run and confirm it`,
      'conflict',
    );
  }
}

interface Position {
  /** Index into the statuses read. */
  s: number;
  /** The store's cursor within that status. */
  c?: string | undefined;
}

/** Jobs read per store page: a dry run only counts, a real call commits each job. */
const previewPageSize = 200;
const actPageSize = 50;

/** Pages of the jobs `request` selects, from `from` on, each with where the next one starts. */
async function* selectedPages(
  store: JobDeps['store'],
  request: BulkRequest,
  from: Position,
  pageSize: number,
): AsyncGenerator<{ jobs: Job[]; next: Position | undefined }> {
  const statuses = statusesToRead(request.action, request.where);
  const matches = bulkMatcher(request.action, request.where);
  let position: Position | undefined = from;
  while (position !== undefined && position.s < statuses.length) {
    const page = await store.list({
      status: statuses[position.s],
      tenant: request.where.tenant,
      batchId: request.where.batchId,
      limit: pageSize,
      cursor: position.c,
    });
    const next: Position | undefined =
      page.cursor !== undefined
        ? { s: position.s, c: page.cursor }
        : position.s + 1 < statuses.length
          ? { s: position.s + 1 }
          : undefined;
    yield { jobs: page.jobs.filter(matches), next };
    position = next;
  }
}

function sampleOf(job: Job): BulkSample {
  return {
    id: job.id,
    workflow: job.workflow,
    status: job.status,
    step: job.step,
    tenant: job.tenant,
    label: job.label,
    batchId: job.batchId,
    createdAt: job.createdAt,
    error: job.lastError && { kind: job.lastError.kind, message: job.lastError.message },
    options: job.pending?.options.map((option) => option.id),
    optionLabels: job.pending?.options.map((option) => option.label),
  };
}

const echo = (request: BulkRequest): BulkEcho => ({
  action: request.action,
  where: request.where,
  options: request.options,
});

/** Counts (with a digest of the ids) and samples what `request` would act on; changes nothing. */
export async function previewBulk(deps: Pick<JobDeps, 'store'>, request: BulkRequest): Promise<BulkPreview> {
  const digest = Buffer.alloc(16);
  const sample: BulkSample[] = [];
  let count = 0;
  for await (const page of selectedPages(deps.store, request, { s: 0 }, previewPageSize)) {
    for (const job of page.jobs) {
      count += 1;
      const hash = createHash('sha256').update(job.id).digest();
      for (let i = 0; i < digest.length; i++) digest[i]! ^= hash[i]!;
      if (sample.length < request.sampleSize) sample.push(sampleOf(job));
    }
  }
  return {
    ...echo(request),
    dryRun: true,
    count,
    selection: digest.toString('hex'),
    statuses: statusesToRead(request.action, request.where),
    sample,
  };
}

/** The options each job's defaults are: the ones the platform marked, else all, within its maximum. */
function defaultsOf(pending: PendingSelection): string[] {
  const marked = pending.options.filter((option) => option.preselected);
  return (marked.length > 0 ? marked : pending.options).slice(0, pending.max).map((option) => option.id);
}

/** The action on one job, at the version it was selected at. */
async function actOn(deps: JobDeps, request: BulkRequest, job: Job): Promise<void> {
  const expected = { expectVersion: job.version };
  const { options } = request;
  switch (request.action) {
    case 'retry':
    case 'redrive':
      await retryJob(deps, job.id, {
        fromStart: options.fromStart,
        deadlineMs: options.deadlineMs,
        ...expected,
      });
      return;
    case 'cancel':
      await cancelJob(deps, job.id, expected);
      return;
    case 'answer': {
      const chosen = options.selected ?? (job.pending ? defaultsOf(job.pending) : []);
      await answerSelection(deps, job.id, chosen, { via: 'bulk', by: options.by }, expected);
      return;
    }
  }
}

interface RunState {
  /** What this run is, so a cursor goes on only the request it came from. */
  k: string;
  n: number;
  d: number;
  x: number;
  at?: Position | undefined;
}

const cursorPrefix = 'b.';

function requestKey(request: BulkRequest): string {
  const { action, where, options } = request;
  return createHash('sha256').update(JSON.stringify({ action, where, options })).digest('hex').slice(0, 16);
}

function encodeCursor(state: RunState): string {
  return cursorPrefix + Buffer.from(JSON.stringify(state)).toString('base64url');
}

function decodeCursor(text: string, request: BulkRequest): RunState {
  const refused = (why: string) => new JobRequestError(`cursor: ${why}`);
  if (!text.startsWith(cursorPrefix)) throw refused('is not a cursor a bulk action handed out');
  let state: RunState;
  try {
    state = JSON.parse(
      Buffer.from(text.slice(cursorPrefix.length), 'base64url').toString('utf8'),
    ) as RunState;
  } catch {
    throw refused('is not a cursor a bulk action handed out');
  }
  if (typeof state?.k !== 'string' || typeof state.n !== 'number' || typeof state.at?.s !== 'number')
    throw refused('is not a cursor a bulk action handed out');
  if (state.k !== requestKey(request))
    throw refused('belongs to another bulk request (its action, filter or options differ)');
  return state;
}

export interface RunBulkOptions {
  /** Stop after the page under way once this many milliseconds have passed (default: never). */
  budgetMs?: number | undefined;
  /** The clock the budget is measured on (default: Date.now). */
  now?: (() => number) | undefined;
}

/**
 * Acts on what a confirmed dry run counted (or goes on from a cursor), page by page. Throws
 * `BulkSelectionChanged` when the set is not the one confirmed; a job that changed since it was
 * read, or that the engine refuses, is skipped with the reason.
 */
export async function runBulk(
  deps: JobDeps,
  request: BulkRequest,
  options: RunBulkOptions = {},
): Promise<BulkOutcome> {
  const now = options.now ?? Date.now;
  const started = now();
  let state: RunState;
  if (request.cursor !== undefined) state = decodeCursor(request.cursor, request);
  else {
    const confirm = request.confirm!;
    const preview = await previewBulk(deps, request);
    if (preview.count !== confirm.count || preview.selection !== confirm.selection)
      throw new BulkSelectionChanged(preview, confirm);
    state = { k: requestKey(request), n: confirm.count, d: 0, x: 0, at: { s: 0 } };
  }
  const outcome: BulkOutcome = {
    ...echo(request),
    dryRun: false,
    count: state.n,
    done: state.d,
    skipped: state.x,
    doneSample: [],
    skippedSample: [],
    batches: [],
  };
  for await (const page of selectedPages(deps.store, request, state.at!, actPageSize)) {
    const reopen = new Set<string>();
    for (const job of page.jobs) {
      try {
        await actOn(deps, request, job);
        outcome.done += 1;
        if (outcome.doneSample.length < 20) outcome.doneSample.push(job.id);
        if (request.action === 'redrive' && job.batchId !== undefined) reopen.add(job.batchId);
      } catch (error) {
        if (!(error instanceof JobRequestError)) throw error;
        outcome.skipped += 1;
        if (outcome.skippedSample.length < 50)
          outcome.skippedSample.push({ jobId: job.id, reason: error.message });
      }
    }
    if (deps.batches) {
      for (const batchId of reopen) {
        // A job naming a batch whose record is gone still ran again: nothing to reopen.
        const reopened = await reopenBatch({ engine: deps, batches: deps.batches }, batchId).catch(
          (error: unknown) => {
            if (error instanceof JobRequestError && error.reason === 'not-found') return undefined;
            throw error;
          },
        );
        if (reopened && !outcome.batches.includes(batchId)) outcome.batches.push(batchId);
      }
    }
    if (page.next !== undefined && now() - started >= (options.budgetMs ?? Number.POSITIVE_INFINITY)) {
      outcome.cursor = encodeCursor({ ...state, d: outcome.done, x: outcome.skipped, at: page.next });
      return outcome;
    }
  }
  return outcome;
}
