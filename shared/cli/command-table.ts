/**
 * Every command of `opflow`: name, summary, arguments, options, help text and handler, in the
 * order `opflow --help` lists them. shared/cli/program.ts builds the commander program from this
 * table; docs/guides/cli.md names every command (a test checks it). A handler only hands its
 * typed arguments and options to the command's function; the work is there.
 *
 * `serve` and `mcp` load their modules when run, so the HTTP server and the MCP SDK stay out of
 * every other command's start-up.
 */

import { closestName } from '../openplatform/closest-name';
import { commandDefiner, type HelpText } from './command-spec';
import { batchCommand } from './commands/batch';
import { bulkCommand } from './commands/bulk';
import { callCommand } from './commands/call';
import { callbacksResendCommand, callbacksSecretCommand } from './commands/callbacks';
import { cancelCommand } from './commands/cancel';
import { doctorCommand } from './commands/doctor';
import { ingestCommand } from './commands/ingest';
import { listCommand } from './commands/list';
import { operationsCommand } from './commands/operations';
import { reportCommand } from './commands/report';
import { resumeCommand } from './commands/resume';
import { retryCommand } from './commands/retry';
import { runCommand } from './commands/run';
import { sandboxCommand } from './commands/sandbox';
import {
  schedulesBackfillCommand,
  schedulesListCommand,
  schedulesPauseCommand,
  schedulesTriggerCommand,
} from './commands/schedules';
import { statusCommand } from './commands/status';
import { webhooksListCommand, webhooksSignCommand } from './commands/webhooks';
import { workflowsCommand } from './commands/workflows';
import { ExitCode, exitCodeHelp } from './exit-codes';
import { defaultServePort } from './serve-port';

/** The options every command accepts, before or after its name. */
export const globalOptions = [
  {
    flags: '--backend <backend>',
    description: 'where jobs live and run',
    choices: ['local', 'aws'],
    default: 'local',
  },
  { flags: '--json', description: 'print results as JSON, for scripts' },
  { flags: '--quiet', description: 'no progress output' },
  { flags: '--db <file>', description: 'the database file (env OPFLOW_DB; default .opflow/opflow.db)' },
  { flags: '--out <folder>', description: 'where reports are written (env OPFLOW_OUT; default opflow-out)' },
  { flags: '--qps <n>', description: 'upstream calls per second per API key (env OPFLOW_QPS; default 5)' },
  { flags: '--concurrency <n>', description: 'steps run at once (env OPFLOW_CONCURRENCY; default 8)' },
  { flags: '--base-url <url>', description: 'the Open Platform base URL (env OPFLOW_BASE_URL)' },
  {
    flags: '--sandbox-speed <n>',
    description:
      'how many times faster the sandbox runs than the platform (env OPFLOW_SANDBOX_SPEED; default 30 built in)',
  },
  {
    flags: '--sandbox-drift <seed|off>',
    description:
      "the built-in sandbox's answers move between runs, seeded: counts grow, references come and go (env OPFLOW_SANDBOX_DRIFT; default off)",
  },
] as const;

const defineCommand = commandDefiner(globalOptions);

export const programSummary = "Run the Open Platform's multi-step AI workflows as durable jobs.";

export const programHelp: HelpText = (workflowNames) => `
Workflows: ${workflowNames.join(', ')}
  opflow workflows <name> (or opflow help <name>): its input fields, limits, defaults, an example
  and the calls it makes. Every workflow takes its main text as "text" and its language as "lang";
  examples/any-workflow.json is accepted by every workflow.

The API key comes from OPFLOW_API_KEY (or OPFLOW_API_KEY_<TENANT>), never from a flag. With no
OPFLOW_API_KEY and no OPFLOW_BASE_URL, opflow starts a built-in sandbox with simulated data.

Examples:
  opflow run novelty-check examples/disclosures
  opflow run novelty-check idea.md --select manual
  opflow resume 01J... --select f1,f3
  opflow list --status FAILED

Documentation: docs/README.md (the index of the guides); every command and its page by topic:
docs/guides/cli.md.

${exitCodeHelp}
`;

const oneOfWorkflows: HelpText = (workflowNames) => `one of: ${workflowNames.join(', ')}`;

const selectMode = {
  flags: '--select <mode>',
  description: 'selection points: take the defaults, or ask',
  choices: ['auto', 'manual'],
  default: 'auto',
} as const;

const tenantForKey = {
  flags: '--tenant <name>',
  description: 'the tenant whose API key is used',
  default: 'default',
} as const;

const priorityFlag = {
  flags: '--priority <level>',
  description:
    "high, normal or low: how soon its calls get the key's tokens against other work (default: normal; high goes ahead of a running batch)",
} as const;

const configFile = {
  flags: '--config <file>',
  description: 'the config file (env OPFLOW_CONFIG; default ./opflow.config.json)',
} as const;

const scheduleName = [{ name: '<name>' }] as const;

const workflows = defineCommand({
  name: 'workflows',
  docs: 'docs/guides/cli-jobs.md#workflow-inputs',
  summary:
    'the workflows; with a name: its input fields (limits, defaults), an example and the calls it makes',
  arguments: [{ name: '[name]', description: oneOfWorkflows }],
  run: ({ ctx, args: [name], options }) => workflowsCommand(ctx, name, options),
});

const help = defineCommand({
  name: 'help',
  docs: 'docs/guides/cli.md#commands',
  summary: 'help for a command, or a workflow (opflow help find-solution)',
  arguments: [{ name: '[topic]', description: 'a command or a workflow' }],
  run: async ({ ctx, args: [topic], options, program }) => {
    const sub = topic === undefined ? undefined : program.commands.find((c) => c.name() === topic);
    if (topic !== undefined && !sub && ctx.workflows.has(topic)) return workflowsCommand(ctx, topic, options);
    if (topic !== undefined && !sub) {
      const names = [...ctx.workflows.keys()].sort();
      const closest = closestName(topic, [...program.commands.map((c) => c.name()), ...names]);
      ctx.io.stderr.write(
        `opflow: no command or workflow "${topic}"${closest ? ` (did you mean ${closest}?)` : ''}; workflows: ${names.join(', ')}; opflow --help lists the commands\n`,
      );
      return ExitCode.usage;
    }
    (sub ?? program).outputHelp();
    // `call` is a command and a workflow: the command's help, and where the workflow's is.
    if (topic !== undefined && ctx.workflows.has(topic))
      ctx.io.stderr.write(`(${topic} is also a workflow: opflow workflows ${topic} describes it)\n`);
    return ExitCode.ok;
  },
});

const run = defineCommand({
  name: 'run',
  docs: 'docs/guides/cli-jobs.md#running-a-workflow',
  summary: 'start one job per input and wait for them, showing progress',
  arguments: [
    { name: '<workflow>', description: oneOfWorkflows },
    {
      name: '<inputs...>',
      description:
        'text (.txt), Markdown (.md), JSON (.json), Word (.docx) or PDF (.pdf) files, product images (.png, .jpg: design workflows), folders of them, or - for stdin',
    },
  ],
  options: [
    selectMode,
    {
      flags: '--set <field=value>',
      description:
        'an input field added to every input, repeatable (a JSON value or text), e.g. --set patent=EU0040356240003S',
      repeatable: true,
    },
    {
      flags: '--deadline <duration>',
      description: "fail a job not finished in time, e.g. 30m, 2h, 1d (default: the workflow's, 24h)",
    },
    tenantForKey,
    priorityFlag,
    {
      flags: '--max-units <n>',
      description:
        'the most billed units each job may spend: once reached, it stops before its next step (FAILED, kind cost-cap; opflow retry --max-units goes on)',
    },
    {
      flags: '--fresh',
      description:
        'start new jobs even for inputs already done (a succeeded job of the same tenant on the same upstream) or under way',
    },
    { flags: '--no-wait', description: 'start the jobs and return without waiting' },
    {
      flags: '--stream',
      description:
        'print a streamed answer (llm-chat, encyclopedia-qa) on standard output as it arrives, also when it is not a terminal (on a terminal it is the default, unless --quiet or --json); a run of one job',
    },
  ],
  run: ({ ctx, args: [workflow, inputs], options }) => runCommand(ctx, workflow, inputs, options),
});

/**
 * The exit codes of `opflow ingest` and `opflow batch` (with or without --no-wait, --watch,
 * --dry-run): a script that ingests a manifest is told when a line was refused, even if every
 * valid line ran (docs/guides/cli.md#exit-codes-of-ingest-and-batch).
 */
const bulkExitCodes = `
Exit codes: 0 every line was used and every item that ended succeeded; 1 a line was refused (a bad
line, with --no-wait and --dry-run too), an item failed or was cancelled, or the batch stopped or
paused; 3 only items waiting for a selection are left; 130 interrupted (nothing is lost).`;

const ingest = defineCommand({
  name: 'ingest',
  docs: 'docs/guides/bulk-ingestion.md#run-a-batch',
  summary:
    'bulk: run a workflow over every line of a manifest (JSON Lines, CSV) or every document of a folder, as one batch',
  arguments: [
    {
      name: '<path>',
      description: 'a .jsonl or .csv manifest, or a folder of .txt, .md, .json, .docx and .pdf documents',
    },
  ],
  options: [
    {
      flags: '--workflow <name>',
      description: (names: readonly string[]) =>
        `the workflow of every line without its own: ${names.join(', ')}`,
      required: true,
    },
    {
      flags: '--batch <name>',
      description:
        "the batch's name (default: named after the manifest or folder); the same name continues it",
    },
    {
      flags: '--dry-run',
      description: 'validate every line and estimate calls and billed units; start nothing',
    },
    {
      flags: '--max-units <n>',
      description: 'refuse to start (or pause) when the estimate or the billed units pass n',
    },
    {
      flags: '--failure-budget <n|n%>',
      description: 'stop starting new items once this many (or this % of the lines) failed',
    },
    {
      flags: '--in-flight <n>',
      description: 'items of this batch running at once (fairness with other work)',
      default: '32',
    },
    selectMode,
    {
      flags: '--deadline <duration>',
      description: "fail an item not finished in time, e.g. 2h (default: the workflow's)",
    },
    tenantForKey,
    priorityFlag,
    {
      flags: '--no-wait',
      description: 'read the whole source and return; opflow batch <id> --watch runs and follows it',
    },
  ],
  help: `
A manifest line (or CSV row) has "id" (required, unique in the file), the workflow's input fields
(e.g. "text", "title") or "file" (a document relative to the manifest) instead of the text, and
optionally "workflow", "select", "deadline" and "priority". Bad lines are reported with their line number and
reason (also in failed.jsonl) and the valid lines still run. Ingesting the same manifest again
creates nothing new; a changed line is a new item. Outputs: <out>/batches/<batchId>/summary.csv,
results.jsonl, failed.jsonl and index.html, kept up to date while the batch runs. When only items
that wait for a selection ("select": "manual") are left, it ends with exit code 3 and the command
that answers each; opflow batch <batchId> --watch then finishes the batch.
${bulkExitCodes}`,
  run: ({ ctx, args: [path], options }) => ingestCommand(ctx, path, options),
});

const batch = defineCommand({
  name: 'batch',
  docs: 'docs/guides/bulk-ingestion.md#follow-a-batch',
  summary: 'list batches, or show one: totals, calls, billed units, elapsed time and ETA',
  arguments: [{ name: '[batchId]', description: 'the batch to show (default: list them)' }],
  options: [
    {
      flags: '--watch',
      description:
        'follow the batch live, redrawn as its jobs change in any process, until it finishes (locally this also runs it; on aws it follows the job API at OPFLOW_API_URL, signed with your AWS credentials or OPFLOW_API_TOKEN, else reads every 2 s)',
    },
    {
      flags: '--redrive',
      description: 'run its failed and cancelled items again, each from the step it failed at',
    },
    {
      flags: '--from-start',
      description: "with --redrive: from each item's first step (paid calls already made count as repeats)",
    },
    {
      flags: '--deadline <duration>',
      description:
        'with --redrive: a new deadline for each item, e.g. 2h (what helps items that failed on theirs; default: as long as each had)',
    },
    {
      flags: '--max-units <n>',
      description:
        'change its billed-units limit; raised above what it billed, a batch paused by the limit continues',
    },
    {
      flags: '--download <dir>',
      description:
        "copy its outputs and every finished job's report into <dir> (index.html links them there; works offline, on aws too)",
    },
    { flags: '--limit <n>', description: 'list at most this many', default: '50' },
  ],
  help: bulkExitCodes,
  run: ({ ctx, args: [batchId], options }) => batchCommand(ctx, batchId, options),
});

const resume = defineCommand({
  name: 'resume',
  docs: 'docs/guides/cli-jobs.md#stopping-and-continuing',
  summary: 'answer a selection, or continue every unfinished job (after Ctrl-C, a crash or kill -9)',
  arguments: [
    { name: '[jobId]', description: 'the job to answer or continue (default: every unfinished job)' },
  ],
  options: [
    {
      flags: '--select <ids>',
      description: 'the chosen option ids, comma-separated (see opflow status <jobId>)',
    },
    {
      flags: '--by <name>',
      description:
        'who answers, kept with the answer (default: the login name, $USER); where two approvers must confirm, each gives their own',
    },
    { flags: '--as <name>', description: 'the same as --by' },
    {
      ...configFile,
      description:
        "the config file whose reviewers' rules the answer follows (a second approver where one is asked for; env OPFLOW_CONFIG; default ./opflow.config.json)",
    },
    { flags: '--no-wait', description: 'answer and return without waiting' },
  ],
  run: ({ ctx, args: [jobId], options }) => resumeCommand(ctx, jobId, options),
});

const retry = defineCommand({
  name: 'retry',
  docs: 'docs/guides/cli-jobs.md#retrying-a-failed-or-cancelled-job',
  summary: 'run a failed or cancelled job again, from the step it stopped at, and wait for it',
  arguments: [{ name: '<jobId>' }],
  options: [
    { flags: '--from-start', description: 'run the whole workflow again from its first step' },
    {
      flags: '--deadline <duration>',
      description: 'time for the new run, e.g. 30m, 2h (default: as long as the first run had)',
    },
    {
      flags: '--max-units <n>',
      description:
        'a new cap of billed units for the job (all its runs); a job stopped at its cap goes on only with a higher one',
    },
    { flags: '--no-wait', description: 'queue the retry and return without waiting' },
  ],
  run: ({ ctx, args: [jobId], options }) => retryCommand(ctx, jobId, options),
});

const status = defineCommand({
  name: 'status',
  docs: 'docs/guides/cli-jobs.md#looking-at-jobs',
  summary: 'everything about one job: step, usage, error, options waiting for a selection',
  arguments: [{ name: '<jobId>' }],
  run: ({ ctx, args: [jobId], options }) => statusCommand(ctx, jobId, options),
});

const list = defineCommand({
  name: 'list',
  docs: 'docs/guides/cli-jobs.md#looking-at-jobs',
  summary: 'jobs, newest first',
  options: [
    {
      flags: '--status <status>',
      description:
        'only jobs in this status (QUEUED, RUNNING, WAITING, AWAITING_INPUT, SUCCEEDED, FAILED, CANCELLED)',
    },
    { flags: '--workflow <name>', description: 'only jobs of this workflow' },
    { flags: '--batch <id>', description: 'only jobs of this batch (a run or an ingest)' },
    { flags: '--tenant <name>', description: 'only jobs of this tenant' },
    { flags: '--limit <n>', description: 'at most this many', default: '50' },
  ],
  run: ({ ctx, options }) => listCommand(ctx, options),
});

const cancel = defineCommand({
  name: 'cancel',
  docs: 'docs/guides/cli-jobs.md#stopping-and-continuing',
  summary: 'cancel a job that has not finished',
  arguments: [{ name: '<jobId>' }],
  run: ({ ctx, args: [jobId], options }) => cancelCommand(ctx, jobId, options),
});

const bulk = defineCommand({
  name: 'bulk',
  docs: 'docs/guides/cli-bulk-actions.md#acting-on-every-job-a-filter-selects',
  summary: 'retry, redrive, cancel or answer every job a filter selects: counted first, then confirmed',
  arguments: [{ name: '<action>', description: 'retry, redrive, cancel or answer' }],
  options: [
    {
      flags: '--status <statuses>',
      description:
        "only jobs in these statuses, comma-separated, within the action's (retry, redrive: FAILED, CANCELLED; cancel: unfinished; answer: AWAITING_INPUT)",
    },
    { flags: '--workflow <name>', description: 'only jobs of this workflow' },
    { flags: '--tenant <name>', description: 'only jobs of this tenant' },
    { flags: '--batch <id>', description: 'only jobs of this batch' },
    { flags: '--label <text>', description: 'only jobs whose label contains this text' },
    {
      flags: '--created-after <time>',
      description: 'only jobs created at or after (2026-01-31 or ISO 8601)',
    },
    {
      flags: '--created-before <time>',
      description: 'only jobs created at or before (a date means its end)',
    },
    {
      flags: '--failure <kind>',
      description: 'only jobs whose last error is of this kind (deadline, not-found, ...)',
    },
    {
      flags: '--from-start',
      description: 'retry, redrive: from the first step (paid calls made count as repeats)',
    },
    { flags: '--deadline <duration>', description: 'retry, redrive: a new deadline for each, e.g. 2h' },
    {
      flags: '--select <ids>',
      description: 'answer: the option ids to choose in every job, comma-separated',
    },
    {
      flags: '--take-defaults',
      description: "answer: each job's defaults (the options the platform marked)",
    },
    {
      flags: '--by <name>',
      description:
        'answer: who answers, kept with each answer (how: bulk); a second approver where a rule asks',
    },
    { flags: '--dry-run', description: 'count and list what would change, change nothing' },
    { flags: '--yes', description: 'act without asking (after the count is printed)' },
    { flags: '--sample <n>', description: 'jobs listed by the count', default: '10' },
  ],
  help: `
Counts the jobs first and lists a sample, then asks (a terminal prompt; otherwise "y" on standard
input) unless --yes. It acts on the set it counted: when the set changed meanwhile it refuses
(exit 1); a job that changed since it was read, or one the engine refuses, is skipped and named
(exit 1). Each job's change is a versioned commit, so two runs at once act on each job once.
redrive is retry for items of batches, and runs their batches again. The job API has the same as
POST /jobs/bulk (a dry run, then the call with its count and selection).

Examples:
  opflow bulk retry --failure deadline --deadline 2h --dry-run
  opflow bulk cancel --workflow novelty-check --created-before 2026-01-31 --yes
  opflow bulk answer --batch lamps --take-defaults`,
  run: ({ ctx, args: [action], options }) => bulkCommand(ctx, action, options),
});

const report = defineCommand({
  name: 'report',
  docs: 'docs/guides/cli-jobs.md#looking-at-jobs',
  summary: "where a finished job's report is, or the report itself",
  arguments: [{ name: '<jobId>' }],
  options: [
    { flags: '--print', description: 'print the report instead of where it is' },
    {
      flags: '--format <format>',
      description: 'with --print: html, md, json (the data) or docx (Word: redirect it)',
      default: 'md',
    },
  ],
  help: `
Without --print: one line per file of the report (report.html, report.md, report.docx, result.json),
then one per image kept beside it (images/<n>.png: a product image or a line drawing a design
workflow had as base64) and one per attachment. Paths locally; presigned links on aws.`,
  run: ({ ctx, args: [jobId], options }) => reportCommand(ctx, jobId, options),
});

const sandbox = defineCommand({
  name: 'sandbox',
  docs: 'docs/guides/cli-operations.md#calling-the-sandbox-with-curl',
  summary: 'start the stand-in for the Open Platform API in the foreground',
  options: [
    { flags: '--port <n>', description: 'the port (0 picks a free one)', default: '8787' },
    { flags: '--host <address>', description: 'the interface to listen on', default: '127.0.0.1' },
    {
      flags: '--speed <n>',
      description: 'how many times faster than the platform its tasks finish',
      default: '1',
    },
    {
      flags: '--state <file>',
      description: 'keep its tasks in this file and continue them when started again on it',
    },
    {
      flags: '--drift <seed|off>',
      description:
        'answers move between runs of the same request, seeded: counts grow, references come and go, wording changes (default off)',
    },
  ],
  run: ({ ctx, options }) => sandboxCommand(ctx, options),
});

/** The tools `opflow mcp --help` names (a test holds them to shared/mcp's tool table). */
export const mcpHelp = `
Tools: list_workflows, submit_job, get_job, list_jobs, answer_selection, cancel_job, retry_job,
bulk_action, get_report, ingest, get_batch, list_webhook_sources; resource opflow://jobs/{id}/report.
In an MCP client's configuration, give every path absolute (clients start servers in a folder of
their own): the command "node" with arguments ["/path/to/opflow/bin/opflow.js", "mcp"] and env
OPFLOW_DB=/path/to/opflow-data/opflow.db, OPFLOW_OUT=/path/to/opflow-data/reports (and
OPFLOW_API_KEY, else the built-in sandbox; see docs/guides/mcp.md). Standard output carries
only the protocol; messages for people go to standard error.`;

const mcp = defineCommand({
  name: 'mcp',
  docs: 'docs/guides/mcp.md#adding-opflow-to-an-mcp-client',
  summary: 'the MCP server for agents on stdin/stdout (runs the local workers here, as serve does)',
  help: mcpHelp,
  // Loaded only here: the MCP SDK and the HTTP server stay out of every other command's memory.
  run: async ({ ctx, options }) => (await import('./commands/mcp')).mcpCommand(ctx, options),
});

const serve = defineCommand({
  name: 'serve',
  docs: 'docs/guides/job-api.md#routes',
  summary: 'serve the job HTTP API (the routes of the AWS one) and run its jobs here',
  options: [
    { flags: '--port <n>', description: 'the port (0 picks a free one)', default: String(defaultServePort) },
    {
      flags: '--host <address>',
      description: 'the interface to listen on (set OPFLOW_SERVE_TOKEN beyond loopback)',
      default: '127.0.0.1',
    },
    {
      flags: '--mcp',
      description: 'also serve the MCP server for agents at /mcp (Streamable HTTP, same token rule)',
    },
    {
      flags: '--config <file>',
      description:
        'webhook mappings, schedules and reviewers (env OPFLOW_CONFIG; default ./opflow.config.json)',
    },
  ],
  help: `
The dashboard (web page) is at GET / with its files at GET /ui/{file} (see docs/guides/dashboard.md).
Routes (described in OpenAPI at GET /openapi.json and in docs/guides/job-api.md): GET /health, POST /jobs,
GET /jobs (?status=&workflow=&batchId=&tenant=&source=&since=&until=&q=&limit=&cursor=), GET /jobs/{id},
POST /jobs/{id}/selection, POST /jobs/{id}/cancel, POST /jobs/{id}/retry ({"fromStart", "deadlineMs"} optional),
POST /jobs/bulk (retry, redrive, cancel or answer the jobs a filter selects: a dry run, then confirmed),
GET /jobs/{id}/report (where the files are), GET /jobs/{id}/report/{file} (the file itself),
GET /jobs/{id}/timeline (the steps with their figures), GET /jobs/{id}/input (its input, to run again),
POST /batch-uploads/check (a manifest's text checked line by line, with its cost estimate; nothing stored),
POST /batch-uploads (the same, kept beside the database and started as a batch),
GET /batches, GET /batches/{id}, POST /batches/{id}/redrive, POST /batches/{id}/cancel,
GET /batches/{id}/outputs/{file} (summary.csv, summary.xlsx, results.jsonl, failed.jsonl, index.html),
GET /schedules, POST /schedules/{name}/trigger, POST /schedules/{name}/pause ({"reason": "..."}),
POST /schedules/{name}/resume, GET /webhook-deliveries (?source=&limit=&cursor=),
GET /webhook-sources (each source's state: open or capped with why and until when, caps, spend, last delivery),
POST /webhooks/{source} (Standard Webhooks signature with OPFLOW_WEBHOOK_SECRET_<SOURCE>; no token),
POST /events/token (a 5-minute token for the live feed), GET /events (?token=&tenant=&batchId=&jobId=;
server-sent events of job, step and batch changes, resumable with Last-Event-ID),
GET /review/{token}, POST /review/{token} (a reviewer notice's signed link: the confirmation page and its
form; no token, see docs/guides/reviewers.md), POST /mcp (with --mcp). It also runs the schedules of the config file and keeps active batches going.
With OPFLOW_SERVE_TOKEN set, every request needs the header Authorization: Bearer <token>.
Callbacks (callbackUrl) link the report files to GET /jobs/{id}/report/{file} at OPFLOW_PUBLIC_URL
(where receivers reach this server; no links without it); see docs/guides/callbacks.md.
The first line on standard output is the URL; requests are logged on standard error.`,
  run: async ({ ctx, options }) => (await import('./commands/serve')).serveCommand(ctx, options),
});

const callbacks = defineCommand({
  name: 'callbacks',
  docs: 'docs/guides/callbacks.md',
  summary: 'signed callbacks of finished jobs (callbackUrl): send again, show the signing secret',
  subcommands: [
    defineCommand({
      name: 'resend',
      summary: "send a finished job's callback again (a new round of retries, a new webhook-id)",
      arguments: [{ name: '<jobId>' }],
      run: ({ ctx, args: [jobId], options }) => callbacksResendCommand(ctx, jobId, options),
    }),
    defineCommand({
      name: 'secret',
      summary: "print the Standard Webhooks secret (whsec_...) a tenant's callbacks are signed with",
      options: [{ flags: '--tenant <name>', description: 'the tenant', default: 'default' }],
      help: `
Locally the secret is OPFLOW_CALLBACK_SECRET_<TENANT> (or OPFLOW_CALLBACK_SECRET), else one generated
on first use and kept in the database. On aws it is the Secrets Manager secret
<CallbackSecretPrefix><tenant> the stack creates.`,
      run: ({ ctx, options }) => callbacksSecretCommand(ctx, options),
    }),
  ],
});

const webhooks = defineCommand({
  name: 'webhooks',
  docs: 'docs/guides/schedules-and-webhooks.md#webhooks-in-post-webhookssource',
  summary: "the webhook sources of the config file: caps, the last 24 hours' spend, capped or open",
  options: [configFile],
  help: `
A source at its maxUnitsPerDay is capped: each delivery is answered 429 cost-cap with Retry-After and
recorded (GET /webhook-deliveries, the dashboard's Webhooks page), and starts no job. It takes deliveries
again by itself once its jobs of the last 24 hours were billed less than the cap (the time is shown),
or at once when the cap is raised in the config file.`,
  run: ({ ctx, options }) => webhooksListCommand(ctx, options),
  subcommands: [
    defineCommand({
      name: 'sign',
      summary: 'sign a JSON file as a webhook of <source> and print the curl command that sends it',
      arguments: [
        {
          name: '<source>',
          description: 'the webhook source (its secret is OPFLOW_WEBHOOK_SECRET_<SOURCE>)',
        },
        { name: '<file>', description: 'the body to send, byte for byte' },
      ],
      options: [
        {
          flags: '--url <url>',
          description: 'the base URL of opflow serve or the aws job API',
          default: `http://127.0.0.1:${defaultServePort}`,
        },
        {
          flags: '--id <webhookId>',
          description: 'the webhook-id (default: a new one; the same id again is a replay)',
        },
      ],
      run: ({ ctx, args: [source, file], options }) => webhooksSignCommand(ctx, source, file, options),
    }),
  ],
});

const schedules = defineCommand({
  name: 'schedules',
  docs: 'docs/guides/schedules-and-webhooks.md#schedules',
  summary: 'the schedules of the config file: next and last fire time, the last job',
  options: [configFile],
  run: ({ ctx, options }) => schedulesListCommand(ctx, options),
  subcommands: [
    defineCommand({
      name: 'trigger',
      summary: 'start a job of a schedule now',
      arguments: scheduleName,
      options: [configFile],
      run: ({ ctx, args: [name], options }) => schedulesTriggerCommand(ctx, name, options),
    }),
    defineCommand({
      name: 'backfill',
      summary: 'start the jobs of past slots (a slot that has a job keeps it)',
      arguments: scheduleName,
      options: [
        configFile,
        { flags: '--from <time>', description: 'first slot time, e.g. 2026-01-01', required: true },
        { flags: '--to <time>', description: 'last slot time, e.g. 2026-01-31T23:59:59Z', required: true },
      ],
      run: ({ ctx, args: [name], options }) => schedulesBackfillCommand(ctx, name, options),
    }),
    defineCommand({
      name: 'pause',
      summary: 'skip the slots of a schedule until it is resumed (every process firing it sees the pause)',
      arguments: scheduleName,
      options: [
        {
          flags: '--reason <text>',
          description: 'why (shown beside the schedule in opflow schedules and the dashboard)',
          required: true,
        },
        configFile,
      ],
      run: ({ ctx, args: [name], options }) => schedulesPauseCommand(ctx, name, options, true),
    }),
    defineCommand({
      name: 'resume',
      summary: 'fire the slots of a paused schedule again, from now on (missed slots stay skipped)',
      arguments: scheduleName,
      options: [configFile],
      run: ({ ctx, args: [name], options }) => schedulesPauseCommand(ctx, name, options, false),
    }),
  ],
});

const operations = defineCommand({
  name: 'operations',
  docs: 'docs/guides/cli-operations.md#listing-and-calling-operations',
  summary: "list the platform's operations (all 356) with their parameters; name one to see it in full",
  arguments: [
    {
      name: '[words...]',
      description: 'only operations matching every word (id, short id, summary, path, field names)',
    },
  ],
  options: [
    {
      flags: '--group <group>',
      description: 'only this group (e.g. "Patent Legal Data"; a unique prefix is enough)',
    },
  ],
  help: `
Examples:
  opflow operations                          every operation, by group
  opflow operations --group "patent legal"   one group
  opflow operations legal status             operations matching both words
  opflow operations p002                     one operation in full, with a request to start from

Call one with opflow call <operationId or short id>, or run it as a job: opflow run call <file>.`,
  run: ({ ctx, args: [words], options }) => operationsCommand(ctx, words, options),
});

const call = defineCommand({
  name: 'call',
  docs: 'docs/guides/cli-operations.md#listing-and-calling-operations',
  summary: "call one of the platform's operations once and print its data (see opflow operations)",
  arguments: [
    { name: '<operation>', description: 'an operationId (p002PatentQuerySearch) or short id (p002)' },
  ],
  options: [
    {
      flags: '--body <file|->',
      description: 'the JSON request body: a file, - for standard input, or inline JSON',
    },
    {
      flags: '--query <name=value>',
      description: 'a parameter, repeatable; path and header parameters too, by their declared names',
      repeatable: true,
    },
    tenantForKey,
  ],
  help: `
Prints the answer's data (JSON); with --json, {operationId, data, usage}. A failure prints its
kind, code, HTTP status and correlation id (with --json, as {error: {...}} on standard output).
Nothing is sent when the parameters or the body do not fit the operation's schema.
Multipart operations take the local path of a file in each file field of the body.

Examples:
  opflow call p002 --body - <<< '{"query_text": "TACD:(solid-state battery)", "limit": 5}'
  opflow call p013BasicPatentDataLegalStatus --query patent_id=... --query pn=US10000000B2
  opflow call jobIdStatus --query job_id=J123`,
  run: ({ ctx, args: [operation], options }) => callCommand(ctx, operation, options),
});

const doctor = defineCommand({
  name: 'doctor',
  docs: 'docs/guides/deploy-operating.md#check-a-deploy-opflow-doctor',
  summary: 'check that this setup can run jobs: each check ok, warn or fail, with its fix',
  help: `
Local: the database's folder and the reports folder are writable; the key answers one patent count
(p001, the cheapest call of the workflows), or the built-in sandbox is in use (said plainly); the
key's rate now. With --backend aws: the stack's outputs, the job table, the work queue and its
dead-letter queue, the report bucket, that every tenant's API key secret holds a key (never
shown) and, with the stack's outputs file (OPFLOW_STACK_OUTPUTS): the alarm topic has a confirmed
subscription, the functions' concurrency fits the account's (Lambda GetAccountSettings), and the
functions that send to their own queue allow it (RecursiveLoop). Exit code 5 when a check fails;
--json for scripts.`,
  run: ({ ctx, options }) => doctorCommand(ctx, options),
});

/** The commands, in the order of `opflow --help`. */
export const cliCommands = [
  workflows,
  help,
  run,
  ingest,
  batch,
  resume,
  retry,
  status,
  list,
  cancel,
  bulk,
  report,
  sandbox,
  mcp,
  serve,
  callbacks,
  webhooks,
  schedules,
  operations,
  call,
  doctor,
];
