/**
 * `npm run smoke:aws -- --stack <name>`: one job of each workflow against a deployed stack, through
 * its job API as a client would call it. The stack's `ApiUrl` comes from the outputs file of `cdk
 * deploy --outputs-file` (`--outputs`, else OPFLOW_STACK_OUTPUTS); requests are signed with SigV4
 * for `execute-api` with the default AWS credentials (a stack whose `api.auth` is `iam`), or carry
 * `--token`/OPFLOW_API_TOKEN as a bearer token (`jwt`). Each job runs the workflow's example input
 * with manual selection: the smoke test answers each selection point through the API (the options
 * the upstream marked, else the fewest it allows), waits until the job ends or the deadline passes
 * (a job still running then is cancelled, so nothing keeps spending), and reads the report's links
 * (`result.json` fetched through its link). It prints a table of workflow, status, calls, billed
 * units and seconds, and exits 1 when any job did not succeed with its report stored.
 *
 *   npm run smoke:aws -- --stack opflow-dev [--outputs cdk-outputs.json] [--workflows novelty-check,patent-count]
 *                        [--deadline 900] [--tenant default] [--token <jwt>] [--json]
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { SQSClient } from '@aws-sdk/client-sqs';
import * as z from 'zod';
import { errorMessage } from '../shared/errors/error-message';
import { createJobApiClient, type Job, type JobApiClient } from '../shared/job-api-client';
import { workflows } from '../shared/workflows';
import { describeWorkflow } from '../shared/workflows/describe';

/** What the smoke test found of one workflow's job. */
export interface SmokeRow {
  workflow: string;
  jobId?: string | undefined;
  /** The job's last status, or `not created` / `timed out`. */
  status: string;
  calls: number;
  units: number;
  seconds: number;
  /** Selection points answered through the API. */
  answered: number;
  ok: boolean;
  /** Why it is not ok, or what was checked. */
  detail: string;
}

export interface SmokeOptions {
  api: JobApiClient;
  workflows: readonly string[];
  /** Milliseconds each job may take, from its creation. */
  deadlineMs: number;
  tenant?: string | undefined;
  /** Between two reads of a job (default 2 s). */
  pollMs?: number | undefined;
  /** Names the jobs and their idempotency keys (default: random). */
  runId?: string | undefined;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);
const REPORT_FILES = ['result.json', 'report.md', 'report.html'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An API refusal as one line: status and the error's message. */
function refusal(status: number, error: unknown): string {
  const message = (error as { error?: { message?: string }; message?: string } | undefined) ?? {};
  return `${status} ${message.error?.message ?? message.message ?? JSON.stringify(error)}`;
}

/** A network failure with its cause (undici says only "fetch failed"). */
function networkError(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause === undefined ? errorMessage(error) : `${errorMessage(error)}: ${errorMessage(cause)}`;
}

/**
 * fetch, tried again twice on a network failure (a reset or closed connection): every request the
 * smoke test makes may be repeated (reads, a create under its idempotency key, a cancel; a selection
 * answered twice is refused and the job read again).
 */
export const retryingFetch: typeof fetch = async (input, init) => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(input instanceof Request ? input.clone() : input, init);
    } catch (error) {
      if (attempt >= 3) throw new Error(`${networkError(error)} (3 attempts)`);
      await sleep(500 * attempt);
    }
  }
};

/** The options to answer a selection point with: those the upstream marked, else the fewest allowed. */
export function chooseOptions(pending: NonNullable<Job['pending']>): string[] {
  const marked = pending.options.filter((option) => option.preselected).map((option) => option.id);
  if (marked.length >= Math.max(pending.min, 1) && marked.length <= pending.max) return marked;
  return pending.options.slice(0, Math.max(pending.min, 1)).map((option) => option.id);
}

/** The job as the API shows it now, or what refused it. */
async function readJob(api: JobApiClient, jobId: string): Promise<Job | string> {
  const read = await api.GET('/jobs/{id}', { params: { path: { id: jobId } } });
  return read.data ? read.data.job : refusal(read.response.status, read.error);
}

/** Answers the selection point the job waits at; the job after it, or what refused the answer. */
async function answerSelection(
  api: JobApiClient,
  job: Job,
  pending: NonNullable<Job['pending']>,
): Promise<Job | string> {
  const answer = await api.POST('/jobs/{id}/selection', {
    params: { path: { id: job.id } },
    body: { selected: chooseOptions(pending), by: 'smoke:aws' },
  });
  if (answer.data) return answer.data.job;
  if (answer.response.status === 409) {
    // Answered already (a request repeated after a reset) or no longer waiting: read it again.
    const read = await readJob(api, job.id);
    if (typeof read !== 'string' && read.status !== 'AWAITING_INPUT') return read;
  }
  return `answering ${pending.step}: ${refusal(answer.response.status, answer.error)}`;
}

/** The report's links, and `result.json` read through its own. */
async function checkReport(api: JobApiClient, jobId: string): Promise<string | undefined> {
  const { data, error, response } = await api.GET('/jobs/{id}/report', { params: { path: { id: jobId } } });
  if (!data) return `report: ${refusal(response.status, error)}`;
  const names = data.files.map((file) => file.name);
  const missing = REPORT_FILES.filter((name) => !names.includes(name));
  if (missing.length > 0)
    return `report: ${missing.join(', ')} not stored (has ${names.join(', ') || 'none'})`;
  const result = data.files.find((file) => file.name === 'result.json');
  const link = new URL(result?.url ?? '', response.url);
  const answer = await retryingFetch(link, { signal: AbortSignal.timeout(30_000) });
  if (!answer.ok) return `report: result.json's link answered ${answer.status}`;
  await answer.arrayBuffer();
  return undefined;
}

/** Runs one job of `workflow` to its end (or the deadline), answering its selection points. */
async function smokeOne(
  options: SmokeOptions & { runId: string },
  workflow: string,
  input: unknown,
): Promise<SmokeRow> {
  const { api } = options;
  const started = Date.now();
  const row = (fields: Partial<SmokeRow> & Pick<SmokeRow, 'status' | 'ok' | 'detail'>): SmokeRow => ({
    workflow,
    calls: 0,
    units: 0,
    answered: 0,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    ...fields,
  });
  const created = await api.POST('/jobs', {
    body: {
      workflow,
      input,
      selection: { mode: 'manual' },
      label: `smoke ${options.runId}`,
      ...(options.tenant ? { tenant: options.tenant } : {}),
    },
    headers: { 'idempotency-key': `smoke-${options.runId}-${workflow}` },
  });
  if (!created.data)
    return row({ status: 'not created', ok: false, detail: refusal(created.response.status, created.error) });
  const jobId = created.data.job.id;
  let job: Job = created.data.job;
  let answered = 0;
  while (!TERMINAL.has(job.status)) {
    if (Date.now() - started > options.deadlineMs) {
      await api.POST('/jobs/{id}/cancel', { params: { path: { id: jobId } } });
      return row({
        jobId,
        status: 'timed out',
        calls: job.usage.calls,
        units: job.usage.billedUnits,
        answered,
        ok: false,
        detail: `still ${job.status} at step ${job.step} after ${options.deadlineMs / 1000} s: cancelled`,
      });
    }
    let next: Job | string;
    if (job.status === 'AWAITING_INPUT' && job.pending) {
      next = await answerSelection(api, job, job.pending);
      if (typeof next !== 'string') answered += 1;
    } else {
      await sleep(options.pollMs ?? 2_000);
      next = await readJob(api, jobId);
    }
    if (typeof next === 'string')
      return row({ jobId, status: job.status, answered, ok: false, detail: next });
    job = next;
  }
  const facts = { jobId, status: job.status, calls: job.usage.calls, units: job.usage.billedUnits, answered };
  if (job.status !== 'SUCCEEDED')
    return row({
      ...facts,
      ok: false,
      detail: job.lastError
        ? `${job.lastError.kind} at ${job.lastError.step}: ${job.lastError.message}`
        : job.status,
    });
  const problem = await checkReport(api, jobId);
  return row({ ...facts, ok: problem === undefined, detail: problem ?? 'report stored, result.json read' });
}

/** One job of each of `options.workflows`, all at once; a row per workflow, in that order. */
export async function smokeTest(options: SmokeOptions): Promise<SmokeRow[]> {
  const runId =
    options.runId ??
    `${new Date().toISOString().slice(0, 16).replace(/[-:T]/g, '')}-${randomBytes(3).toString('hex')}`;
  return Promise.all(
    options.workflows.map(async (name) => {
      const workflow = workflows.get(name);
      if (!workflow)
        return {
          workflow: name,
          status: 'unknown',
          calls: 0,
          units: 0,
          seconds: 0,
          answered: 0,
          ok: false,
          detail: 'no such workflow',
        };
      try {
        return await smokeOne({ ...options, runId }, name, describeWorkflow(workflow).example);
      } catch (error) {
        return {
          workflow: name,
          status: 'error',
          calls: 0,
          units: 0,
          seconds: 0,
          answered: 0,
          ok: false,
          detail: errorMessage(error),
        };
      }
    }),
  );
}

/** The rows as a Markdown table, and a last line saying how many passed. */
export function smokeTable(rows: readonly SmokeRow[]): string {
  const lines = [
    '| workflow | status | calls | units | seconds | selections | result |',
    '|---|---|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.workflow} | ${r.status} | ${r.calls} | ${r.units} | ${r.seconds} | ${r.answered} | ${r.ok ? 'ok' : 'FAIL'}: ${r.detail.replaceAll('|', '\\|').replaceAll('\n', ' ')} |`,
    ),
    '',
    `${rows.filter((r) => r.ok).length} of ${rows.length} workflows passed`,
  ];
  return lines.join('\n');
}

const outputsSchema = z.record(z.string(), z.looseObject({ ApiUrl: z.string().optional() }));

/** The stack's job API URL from an outputs file of `cdk deploy --outputs-file`, naming what is missing. */
export function apiUrlOf(file: string, stack: string): string {
  let parsed: z.infer<typeof outputsSchema>;
  try {
    parsed = outputsSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch (error) {
    throw new Error(`${file}: not an outputs file of cdk deploy --outputs-file (${errorMessage(error)})`);
  }
  const outputs = parsed[stack];
  if (!outputs)
    throw new Error(`${file}: no stack ${stack} (it has ${Object.keys(parsed).join(', ') || 'none'})`);
  if (!outputs.ApiUrl) throw new Error(`${file}: stack ${stack} has no ApiUrl output`);
  return outputs.ApiUrl;
}

/** The region of an execute-api URL (`https://<id>.execute-api.<region>.amazonaws.com/`), if it is one. */
const regionOf = (url: string) => /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com/.exec(url)?.[1];

const usage =
  'usage: npm run smoke:aws -- --stack <name> [--outputs <cdk outputs file>] [--workflows a,b] [--deadline <s>]\n' +
  '                            [--tenant <tenant>] [--token <jwt>] [--json]\n' +
  'Runs one job of each workflow (its example input, selections answered) against a deployed stack through its\n' +
  'job API, checks each report is stored, prints workflow / status / calls / units / seconds; exit 1 on any failure.\n' +
  '  --stack       the stack name, a key of the outputs file (e.g. opflow-dev)\n' +
  '  --outputs     the file of cdk deploy --outputs-file (default: OPFLOW_STACK_OUTPUTS)\n' +
  `  --workflows   comma-separated (default: all ${workflows.size})\n` +
  '  --deadline    seconds each job may take before it is cancelled and counted failed (default 900)\n' +
  "  --tenant      the tenant to run as (an IAM caller is an operator; default: the API's default tenant)\n" +
  '  --token       a bearer token for a stack in JWT mode (default: OPFLOW_API_TOKEN); else requests are\n' +
  '                signed with SigV4 with the default AWS credentials (AWS_PROFILE, AWS_REGION)\n' +
  '  --json        the rows as JSON\n';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      stack: { type: 'string' },
      outputs: { type: 'string' },
      workflows: { type: 'string' },
      deadline: { type: 'string', default: '900' },
      tenant: { type: 'string' },
      token: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  if (!values.stack) throw new Error(`--stack is required\n${usage}`);
  const outputs = values.outputs ?? process.env.OPFLOW_STACK_OUTPUTS?.trim();
  if (!outputs)
    throw new Error('--outputs (or OPFLOW_STACK_OUTPUTS) must name the file of cdk deploy --outputs-file');
  const deadline = Number(values.deadline);
  if (!Number.isFinite(deadline) || deadline <= 0)
    throw new Error(`--deadline must be a positive number of seconds, got ${values.deadline}`);
  const names = values.workflows
    ? values.workflows
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean)
    : [...workflows.keys()];
  const unknown = names.filter((name) => !workflows.has(name));
  if (unknown.length > 0)
    throw new Error(
      `--workflows: no workflow ${unknown.join(', ')} (known: ${[...workflows.keys()].join(', ')})`,
    );
  const baseUrl = apiUrlOf(outputs, values.stack);
  const token = values.token ?? process.env.OPFLOW_API_TOKEN?.trim();
  const region = regionOf(baseUrl) ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const sigv4Client = token ? undefined : new SQSClient({ region });
  const api = createJobApiClient({
    baseUrl,
    fetch: retryingFetch,
    ...(token ? { token } : { sigv4: { region, credentials: sigv4Client!.config.credentials } }),
  });
  try {
    process.stderr.write(
      `smoke:aws: ${names.length} workflow(s) against ${values.stack} (${new URL(baseUrl).host})\n`,
    );
    const rows = await smokeTest({
      api,
      workflows: names,
      deadlineMs: deadline * 1000,
      tenant: values.tenant,
    });
    process.stdout.write(values.json ? `${JSON.stringify(rows, null, 2)}\n` : `${smokeTable(rows)}\n`);
    return rows.every((row) => row.ok) ? 0 : 1;
  } finally {
    sigv4Client?.destroy();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`smoke:aws: ${errorMessage(error)}\n`);
      process.exit(2);
    },
  );
}
