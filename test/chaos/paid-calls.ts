/**
 * The chaos suites' account of paid calls: every call the upstream's ledger saw do the work of a
 * paid operation (a create or an update) is put to the job and step that made it, and must be that
 * step's first call or a repeat the job counted (`job.intents`, `usage.duplicateCreates`). What is
 * not is explained: the job, its step, the call times and outcomes, the crashes around them and the
 * job's own log lines. See docs/concepts/reliability.md, "Paid calls and crashes".
 *
 * A call is put to a job by its body (the sandbox's `ledgerBodies` option): a create sent from a
 * job's input carries the input's unique tag (`local 7`), a later one an upstream id the job holds
 * (a task id, a chat id) or one an earlier call of the job created. A body several jobs send alike
 * (the same passage in two translations) is one account of those jobs together: the upstream may
 * do it as often as they recorded sending it. The sandbox's own `duplicateCreates()` groups creates
 * by body alone, so it takes two jobs that pay once each for the same text for a repeat.
 */

import type { Job } from '../../shared/engine/job-record';
import type { Step, Workflow, WorkflowRegistry } from '../../shared/engine/workflow';
import { findOperation } from '../../shared/openplatform/catalogue';
import { findCatalogueOperation } from '../../shared/openplatform/operations';
import type { LedgerEntry } from '../../shared/sandbox/ledger';
import { pieceOutput, piecesOf, translationInput } from '../../shared/workflows/translation/input';

/** A moment a worker died (a kill -9, or a crash point of the aws harness), on the ledger's clock. */
export interface Crash {
  at: number;
  what: string;
}

/** The paid calls of one step's output of one job, as the upstream saw them and as the job counted them. */
export interface StepAccount {
  /** The job's id (ids joined by ` + ` for a body several jobs sent alike). */
  jobId: string;
  workflow: string;
  output: string;
  /** Calls whose work the upstream did. */
  done: LedgerEntry[];
  /** Calls the job recorded as sent (its intents): the first plus every counted repeat. */
  sent: number;
}

export interface PaidCallAudit {
  /** Paid calls whose work the upstream did. */
  paidCalls: number;
  /** Of those, repeats of a step already done once upstream. */
  repeatsSeenUpstream: number;
  /** Repeats the jobs counted (`usage.duplicateCreates`, all jobs). */
  repeatsCounted: number;
  /** Steps the upstream did more often than their job recorded sending them. */
  uncounted: StepAccount[];
  /** Paid calls no job could be found for (a body with no tag or id of any job). */
  unowned: LedgerEntry[];
}

/** Every string in a body, however deep. */
function stringsOf(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, into);
  else if (value !== null && typeof value === 'object')
    for (const item of Object.values(value)) stringsOf(item, into);
  return into;
}

/** Ids shorter than this are not taken as a job's (a language code, a status). */
const minIdLength = 8;

/** Which job a call belongs to, learning the ids each call creates as it goes. */
class CallOwners {
  readonly #byTag = new Map<string, Job>();
  readonly #byId = new Map<string, Job | null>();
  readonly #tagPattern: RegExp;

  constructor(jobs: Job[], tag: string) {
    // An uploaded image's file name has `_` for the space (`local_7.png`).
    this.#tagPattern = new RegExp(`\\b${tag}[ _](\\d+)\\b`, 'g');
    for (const job of jobs) {
      for (const found of this.tagsIn(JSON.stringify(job.input))) this.#byTag.set(found, job);
      for (const value of stringsOf(job.context)) this.learn(value, job);
    }
  }

  /** The job that sent `entry`, or undefined when no tag or id of one is in its body. */
  ownerOf(entry: LedgerEntry): Job | undefined {
    const strings = stringsOf(entry.body);
    let owner: Job | undefined;
    for (const text of strings) {
      for (const found of this.tagsIn(text)) owner ??= this.#byTag.get(found);
    }
    for (const text of strings) if (!owner) owner = this.#byId.get(text) ?? undefined;
    if (owner && entry.resourceId) this.learn(entry.resourceId, owner);
    return owner;
  }

  private tagsIn(text: string): string[] {
    return [...text.matchAll(this.#tagPattern)].map((match) => match[0].replace('_', ' '));
  }

  /** An id seen with two jobs names neither. */
  private learn(id: string, job: Job): void {
    if (id.length < minIdLength) return;
    const known = this.#byId.get(id);
    this.#byId.set(id, known === undefined || known?.id === job.id ? job : null);
  }
}

/**
 * The operation a step calls: its own, or for a request step the one it picks when that does not
 * depend on the job (p010 of the design workflows). Undefined for a download, or a step that picks
 * its operation per call.
 */
function operationOfStep(step: Step): string | undefined {
  if (step.kind === 'call' || step.kind === 'stream') return step.operation;
  if (step.kind !== 'request') return undefined;
  try {
    return step.operationOf({} as never);
  } catch {
    return undefined;
  }
}

/** Whether an operation only reads: by the workflows' catalogue, else the reference's (p010: a create). */
const effectOf = (operationId: string) =>
  findOperation(operationId)?.effect ?? findCatalogueOperation(operationId)?.effect;

/**
 * The output name a call of `step` was recorded under: the step's name, or for a step that names
 * its output per call (the pieces of a translation) the one this body belongs to.
 */
function outputOf(workflow: Workflow, step: Step, job: Job, body: unknown): string {
  if (!step.outputName) return step.name;
  if (workflow.name === 'translation' && 'inline' in job.input) {
    const pieces = piecesOf(translationInput.parse(job.input.inline));
    const text = stringsOf(body).find((value) => pieces.some((piece) => piece.text === value));
    const index = pieces.findIndex((piece) => piece.text === text);
    if (index >= 0) return pieceOutput(index);
  }
  return `${step.name}:*`;
}

/**
 * The jobs that may have sent a body naming none of them (no tag, no id): those whose step of the
 * operation would send exactly this body (a translation's piece with this text).
 */
function jobsSending(
  entry: LedgerEntry,
  jobs: Job[],
  workflows: WorkflowRegistry,
): { job: Job; workflow: Workflow; output: string }[] {
  return jobs.flatMap((job) => {
    const workflow = workflows.get(job.workflow);
    const step = workflow?.steps.find((candidate) => operationOfStep(candidate) === entry.operationId);
    if (!workflow || !step?.outputName) return [];
    const output = outputOf(workflow, step, job, entry.body);
    return output.endsWith(':*') ? [] : [{ job, workflow, output }];
  });
}

/** How many sends a job recorded for an output (`step:*`: every output its step named per call). */
function sentFor(workflow: Workflow, job: Job, output: string): number {
  if (!output.endsWith(':*')) return job.intents[output] ?? 0;
  const stepNames = new Set(workflow.steps.map((step) => step.name));
  return Object.entries(job.intents)
    .filter(([name]) => !stepNames.has(name))
    .reduce((sum, [, count]) => sum + count, 0);
}

/** Put every paid call the ledger saw done to its job and step, and find what no job counted. */
export function auditPaidCalls(
  ledger: LedgerEntry[],
  jobs: Job[],
  workflows: WorkflowRegistry,
  tag: string,
): PaidCallAudit {
  const owners = new CallOwners(jobs, tag);
  const accounts = new Map<string, StepAccount>();
  const unowned: LedgerEntry[] = [];
  let paidCalls = 0;
  for (const entry of [...ledger].sort((a, b) => a.seq - b.seq)) {
    const owner = owners.ownerOf(entry);
    const effect = effectOf(entry.operationId);
    if (effect === undefined || effect === 'read' || !entry.workDone) continue;
    paidCalls += 1;
    const workflow = owner && workflows.get(owner.workflow);
    const step = workflow?.steps.find((candidate) => operationOfStep(candidate) === entry.operationId);
    if (owner && workflow && step) {
      const output = outputOf(workflow, step, owner, entry.body);
      const key = `${owner.id}\u0000${output}`;
      const account = accounts.get(key) ?? {
        jobId: owner.id,
        workflow: owner.workflow,
        output,
        done: [],
        sent: sentFor(workflow, owner, output),
      };
      account.done.push(entry);
      accounts.set(key, account);
      continue;
    }
    const senders = owner ? [] : jobsSending(entry, jobs, workflows);
    if (senders.length === 0) {
      unowned.push(entry);
      continue;
    }
    const key = `shared\u0000${entry.operationId}\u0000${entry.bodyHash}`;
    const account = accounts.get(key) ?? {
      jobId: senders.map(({ job }) => job.id).join(' + '),
      workflow: senders[0]!.job.workflow,
      output: [...new Set(senders.map(({ output }) => output))].join(' + '),
      done: [],
      sent: senders.reduce((sum, sender) => sum + sentFor(sender.workflow, sender.job, sender.output), 0),
    };
    account.done.push(entry);
    accounts.set(key, account);
  }
  const all = [...accounts.values()];
  const senders = (account: StepAccount) => account.jobId.split(' + ').length;
  return {
    paidCalls,
    repeatsSeenUpstream: all.reduce(
      (sum, account) => sum + Math.max(0, account.done.length - senders(account)),
      0,
    ),
    repeatsCounted: jobs.reduce((sum, job) => sum + job.usage.duplicateCreates, 0),
    uncounted: all.filter((account) => account.done.length > account.sent),
    unowned,
  };
}

/** How far around a call a crash is shown with it. */
const crashWindowMs = 10_000;

/** A readable account of what the audit found wrong (empty when nothing), for the suite's failure message. */
export function explainAudit(
  audit: PaidCallAudit,
  /** The crashes with their times; undefined when they are not timed (said instead). */
  crashes: Crash[] | string,
  logLinesOf: (jobId: string) => string[] = () => [],
): string {
  const time = (at: number) => new Date(at).toISOString().slice(11, 23);
  const call = (entry: LedgerEntry) =>
    `    #${entry.seq} ${time(entry.time)} ${entry.operationId} ${entry.outcome}${entry.fault ? ` (${entry.fault})` : ''} http ${entry.httpStatus}${entry.resourceId ? ` -> ${entry.resourceId}` : ''}`;
  const lines: string[] = [];
  for (const account of audit.uncounted) {
    const first = account.done[0]!.time - crashWindowMs;
    const last = account.done.at(-1)!.time + crashWindowMs;
    lines.push(
      `job ${account.jobId} (${account.workflow}), step output "${account.output}": the upstream did it ${account.done.length} times, the job recorded ${account.sent} sends (${account.done.length - account.sent} not recorded: uncounted repeats)`,
      ...account.done.map(call),
      typeof crashes === 'string'
        ? `  crashes: ${crashes}`
        : `  crashes from ${time(first)} to ${time(last)}: ${
            crashes
              .filter((crash) => crash.at >= first && crash.at <= last)
              .map((crash) => `${time(crash.at)} ${crash.what}`)
              .join('; ') || 'none'
          }`,
      ...logLinesOf(account.jobId).map((line) => `  log: ${line}`),
    );
  }
  for (const entry of audit.unowned) lines.push(`a paid call no job could be found for:`, call(entry));
  return lines.join('\n');
}
