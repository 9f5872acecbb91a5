/**
 * The `opflow` command: parses the command line (commander) and runs one command. bin/opflow.js
 * calls `main(process.argv)`; tests call it with their own streams and environment.
 */
import { Command, CommanderError, Option } from 'commander';
import { version } from '../../package.json';
import type { WorkflowRegistry } from '../engine/workflow';
import { redactUrl } from '../openplatform/redact';
import { type BatchCommandOptions, batchCommand } from './commands/batch';
import { registerCallCommand } from './commands/call';
import { registerCallbackCommands } from './commands/callbacks';
import { cancelCommand } from './commands/cancel';
import { ingestCommand } from './commands/ingest';
import type { IngestCommandOptions } from './commands/ingest-options';
import { listCommand } from './commands/list';
import { registerOperationsCommand } from './commands/operations';
import { reportCommand } from './commands/report';
import { resumeCommand } from './commands/resume';
import { retryCommand } from './commands/retry';
import { runCommand } from './commands/run';
import { type SandboxCommandOptions, sandboxCommand } from './commands/sandbox';
import { registerScheduleCommands } from './commands/schedules';
import { statusCommand } from './commands/status';
import { registerWebhookCommands } from './commands/webhooks';
import { workflowsCommand } from './commands/workflows';
import { type CliContext, type CliIo, classifyError, type GlobalOptions } from './context';
import { ExitCode, type ExitCodeValue, exitCodeHelp } from './exit-codes';
import { defaultServePort } from './serve-port';
import { stdinReader } from './stdin';

export type { CliIo } from './context';
export { ExitCode } from './exit-codes';

export interface MainOptions {
  /** Streams, environment and signals. Default: this process's. */
  io?: CliIo | undefined;
  /** The workflows. Default: every workflow opflow ships. */
  workflows?: WorkflowRegistry | undefined;
}

/** This process's streams, environment and signals. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    readStdin: stdinReader(process.stdin, process.stderr),
    env: process.env,
    cwd: process.cwd(),
    onInterrupt: (handler) => {
      process.on('SIGINT', handler);
      process.on('SIGTERM', handler);
      return () => {
        process.off('SIGINT', handler);
        process.off('SIGTERM', handler);
      };
    },
  };
}

/**
 * Runs the command line `argv` (as in `process.argv`: node, script, arguments) and resolves with
 * the exit code; with this process's io it also sets `process.exitCode`.
 */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const io = options.io ?? processIo();
  const workflows = options.workflows ?? (await import('../workflows')).workflows;
  const ctx: CliContext = { io, workflows };
  let exitCode: ExitCodeValue = ExitCode.ok;
  const program = buildProgram(ctx, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end "successfully"; anything else commander refuses is a usage error.
      exitCode = error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
      // A refused command line, for scripts that asked for JSON: the reason on stdout as JSON too.
      if (exitCode !== ExitCode.ok && argv.includes('--json')) {
        const message =
          error.code === 'commander.help'
            ? 'a subcommand is needed; the help on standard error lists them'
            : error.message.replace(/^error: /, '');
        io.stdout.write(`${JSON.stringify({ error: { message, exitCode } })}\n`);
      }
    } else {
      const classified = classifyError(error);
      // Whatever a message quotes (a base URL, an endpoint), URL credentials are not shown.
      classified.message = redactUrl(classified.message);
      io.stderr.write(`opflow: ${classified.message}\n`);
      if (io.env.OPFLOW_DEBUG && error instanceof Error && error.stack)
        io.stderr.write(`${redactUrl(error.stack)}\n`);
      exitCode = classified.exitCode;
      // Scripts asked for JSON: give them the failure as JSON on stdout too, not only a line on stderr.
      if (program.opts<{ json?: boolean }>().json) {
        io.stdout.write(`${JSON.stringify({ error: { message: classified.message, exitCode } })}\n`);
      }
    }
  }
  if (!options.io) process.exitCode = exitCode;
  return exitCode;
}

function buildProgram(ctx: CliContext, setExitCode: (code: ExitCodeValue) => void): Command {
  const { io, workflows } = ctx;
  const program = new Command('opflow');
  const workflowNames = [...workflows.keys()].sort();
  program
    .description("Run the Open Platform's multi-step AI workflows as durable jobs.")
    .version(version, '-V, --version', 'print the version of opflow')
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(`opflow: ${text.replace(/^error: /, '')}`),
    })
    .exitOverride()
    .showHelpAfterError('(opflow --help lists the commands and options)')
    .addOption(
      new Option('--backend <backend>', 'where jobs live and run').choices(['local', 'aws']).default('local'),
    )
    .option('--json', 'print results as JSON, for scripts')
    .option('--quiet', 'no progress output')
    .option('--db <file>', 'the database file (env OPFLOW_DB; default .opflow/opflow.db)')
    .option('--out <folder>', 'where reports are written (env OPFLOW_OUT; default opflow-out)')
    .option('--qps <n>', 'upstream calls per second per API key (env OPFLOW_QPS; default 5)')
    .option('--concurrency <n>', 'steps run at once (env OPFLOW_CONCURRENCY; default 8)')
    .option('--base-url <url>', 'the Open Platform base URL (env OPFLOW_BASE_URL)')
    .option(
      '--sandbox-speed <n>',
      'how many times faster the sandbox runs than the platform (env OPFLOW_SANDBOX_SPEED; default 30 built in)',
    )
    .option(
      '--sandbox-drift <seed|off>',
      "the built-in sandbox's answers move between runs, seeded: counts grow, references come and go (env OPFLOW_SANDBOX_DRIFT; default off)",
    )
    .addHelpText(
      'after',
      `
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

${exitCodeHelp}
`,
    );

  const globals = (command: Command) => command.optsWithGlobals() as GlobalOptions;

  program
    .command('workflows')
    .description(
      'the workflows; with a name: its input fields (limits, defaults), an example and the calls it makes',
    )
    .argument('[name]', `one of: ${workflowNames.join(', ')}`)
    .action(async (name: string | undefined, _options: unknown, command: Command) => {
      setExitCode(await workflowsCommand(ctx, name, globals(command)));
    });

  // `opflow help <workflow>` describes the workflow; `opflow help <command>` the command.
  program.helpCommand(false);
  program
    .command('help')
    .description('help for a command, or a workflow (opflow help find-solution)')
    .argument('[topic]', 'a command or a workflow')
    .action(async (topic: string | undefined, _options: unknown, command: Command) => {
      if (topic !== undefined && workflows.has(topic)) {
        setExitCode(await workflowsCommand(ctx, topic, globals(command)));
        return;
      }
      const sub = topic === undefined ? undefined : program.commands.find((c) => c.name() === topic);
      if (topic !== undefined && !sub) {
        io.stderr.write(
          `opflow: no command or workflow "${topic}"; workflows: ${workflowNames.join(', ')}\n`,
        );
        setExitCode(ExitCode.usage);
        return;
      }
      (sub ?? program).outputHelp();
    });

  program
    .command('run')
    .description('start one job per input and wait for them, showing progress')
    .argument('<workflow>', `one of: ${workflowNames.join(', ')}`)
    .argument(
      '<inputs...>',
      'text (.txt), Markdown (.md) or JSON (.json) files, folders of them, or - for stdin',
    )
    .addOption(
      new Option('--select <mode>', 'selection points: take the defaults, or ask')
        .choices(['auto', 'manual'])
        .default('auto'),
    )
    .option(
      '--deadline <duration>',
      "fail a job not finished in time, e.g. 30m, 2h, 1d (default: the workflow's, 24h)",
    )
    .option('--tenant <name>', 'the tenant whose API key is used', 'default')
    .option(
      '--fresh',
      'start new jobs even for inputs already done (a succeeded job of the same tenant on the same upstream) or under way',
    )
    .option('--no-wait', 'start the jobs and return without waiting')
    .action(async (workflow: string, inputs: string[], _options: unknown, command: Command) => {
      setExitCode(await runCommand(ctx, workflow, inputs, globals(command) as never));
    });

  program
    .command('ingest')
    .description(
      'bulk: run a workflow over every line of a manifest (JSON Lines, CSV) or every document of a folder, as one batch',
    )
    .argument(
      '<path>',
      'a .jsonl or .csv manifest, or a folder of .txt, .md, .json, .docx and .pdf documents',
    )
    .requiredOption(
      '--workflow <name>',
      `the workflow of every line without its own: ${workflowNames.join(', ')}`,
    )
    .option(
      '--batch <name>',
      "the batch's name (default: named after the manifest or folder); the same name continues it",
    )
    .option('--dry-run', 'validate every line and estimate calls and billed units; start nothing')
    .option('--max-units <n>', 'refuse to start (or pause) when the estimate or the billed units pass n')
    .option(
      '--failure-budget <n|n%>',
      'stop starting new items once this many (or this % of the lines) failed',
    )
    .option('--in-flight <n>', 'items of this batch running at once (fairness with other work)', '32')
    .addOption(
      new Option('--select <mode>', 'selection points: take the defaults, or ask')
        .choices(['auto', 'manual'])
        .default('auto'),
    )
    .option('--deadline <duration>', "fail an item not finished in time, e.g. 2h (default: the workflow's)")
    .option('--tenant <name>', 'the tenant whose API key is used', 'default')
    .option('--no-wait', 'read the whole source and return; opflow batch <id> --watch runs and follows it')
    .addHelpText(
      'after',
      `
A manifest line (or CSV row) has "id" (required, unique in the file), the workflow's input fields
(e.g. "text", "title") or "file" (a document relative to the manifest) instead of the text, and
optionally "workflow", "select" and "deadline". Bad lines are reported with their line number and
reason (also in failed.jsonl) and the valid lines still run. Ingesting the same manifest again
creates nothing new; a changed line is a new item. Outputs: <out>/batches/<batchId>/summary.csv,
results.jsonl, failed.jsonl and index.html, kept up to date while the batch runs. When only items
that wait for a selection ("select": "manual") are left, it ends with exit code 3 and the command
that answers each; opflow batch <batchId> --watch then finishes the batch.`,
    )
    .action(async (path: string, _options: unknown, command: Command) => {
      setExitCode(await ingestCommand(ctx, path, globals(command) as unknown as IngestCommandOptions));
    });

  program
    .command('batch')
    .description('list batches, or show one: totals, calls, billed units, elapsed time and ETA')
    .argument('[batchId]', 'the batch to show (default: list them)')
    .option('--watch', 'follow the batch live until it finishes (locally this also runs it)')
    .option('--redrive', 'run its failed and cancelled items again, each from the step it failed at')
    .option(
      '--max-units <n>',
      'change its billed-units limit; raised above what it billed, a batch paused by the limit continues',
    )
    .option(
      '--download <dir>',
      "copy its outputs and every finished job's report into <dir> (index.html links them there; works offline, on aws too)",
    )
    .option('--limit <n>', 'list at most this many', '50')
    .action(async (batchId: string | undefined, _options: unknown, command: Command) => {
      setExitCode(await batchCommand(ctx, batchId, globals(command) as unknown as BatchCommandOptions));
    });

  program
    .command('resume')
    .description('answer a selection, or continue every unfinished job (after Ctrl-C, a crash or kill -9)')
    .argument('[jobId]', 'the job to answer or continue (default: every unfinished job)')
    .option('--select <ids>', 'the chosen option ids, comma-separated (see opflow status <jobId>)')
    .option('--no-wait', 'answer and return without waiting')
    .action(async (jobId: string | undefined, _options: unknown, command: Command) => {
      setExitCode(await resumeCommand(ctx, jobId, globals(command) as never));
    });

  program
    .command('retry')
    .description('run a failed or cancelled job again, from the step it stopped at, and wait for it')
    .argument('<jobId>')
    .option('--from-start', 'run the whole workflow again from its first step')
    .option(
      '--deadline <duration>',
      'time for the new run, e.g. 30m, 2h (default: as long as the first run had)',
    )
    .option('--no-wait', 'queue the retry and return without waiting')
    .action(async (jobId: string, _options: unknown, command: Command) => {
      setExitCode(await retryCommand(ctx, jobId, globals(command) as never));
    });

  program
    .command('status')
    .description('everything about one job: step, usage, error, options waiting for a selection')
    .argument('<jobId>')
    .action(async (jobId: string, _options: unknown, command: Command) => {
      setExitCode(await statusCommand(ctx, jobId, globals(command)));
    });

  program
    .command('list')
    .description('jobs, newest first')
    .option(
      '--status <status>',
      'only jobs in this status (QUEUED, RUNNING, WAITING, AWAITING_INPUT, SUCCEEDED, FAILED, CANCELLED)',
    )
    .option('--workflow <name>', 'only jobs of this workflow')
    .option('--batch <id>', 'only jobs of this batch (a run or an ingest)')
    .option('--tenant <name>', 'only jobs of this tenant')
    .option('--limit <n>', 'at most this many', '50')
    .action(async (_options: unknown, command: Command) => {
      setExitCode(await listCommand(ctx, globals(command) as never));
    });

  program
    .command('cancel')
    .description('cancel a job that has not finished')
    .argument('<jobId>')
    .action(async (jobId: string, _options: unknown, command: Command) => {
      setExitCode(await cancelCommand(ctx, jobId, globals(command)));
    });

  program
    .command('report')
    .description("where a finished job's report is, or the report itself")
    .argument('<jobId>')
    .option('--print', 'print the report instead of where it is')
    .option('--format <format>', 'with --print: html, md or json (the data)', 'md')
    .action(async (jobId: string, _options: unknown, command: Command) => {
      setExitCode(await reportCommand(ctx, jobId, globals(command) as never));
    });

  program
    .command('sandbox')
    .description('start the stand-in for the Open Platform API in the foreground')
    .option('--port <n>', 'the port (0 picks a free one)', '8787')
    .option('--host <address>', 'the interface to listen on', '127.0.0.1')
    .option('--speed <n>', 'how many times faster than the platform its tasks finish', '1')
    .option('--state <file>', 'keep its tasks in this file and continue them when started again on it')
    .option(
      '--drift <seed|off>',
      'answers move between runs of the same request, seeded: counts grow, references come and go, wording changes (default off)',
    )
    .action(async (_options: unknown, command: Command) => {
      setExitCode(
        await sandboxCommand(ctx, {
          ...(command.opts() as SandboxCommandOptions),
          json: globals(command).json,
        }),
      );
    });

  program
    .command('mcp')
    .description('the MCP server for agents on stdin/stdout (runs the local workers here, as serve does)')
    .addHelpText(
      'after',
      `
Tools: list_workflows, submit_job, get_job, list_jobs, answer_selection, cancel_job, retry_job,
get_report, ingest, get_batch; resource opflow://jobs/{id}/report.
In an MCP client's configuration, give every path absolute (clients start servers in a folder of
their own): the command "node" with arguments ["/path/to/opflow/bin/opflow.js", "mcp"] and env
OPFLOW_DB=/path/to/opflow-data/opflow.db, OPFLOW_OUT=/path/to/opflow-data/reports (and
OPFLOW_API_KEY, else the built-in sandbox; see docs/guides/mcp.md). Standard output carries
only the protocol; messages for people go to standard error.`,
    )
    .action(async (_options: unknown, command: Command) => {
      // Loaded only here: the MCP SDK and the HTTP server stay out of every other command's memory.
      setExitCode(await (await import('./commands/mcp')).mcpCommand(ctx, globals(command)));
    });

  program
    .command('serve')
    .description('serve the job HTTP API (the routes of the AWS one) and run its jobs here')
    .option('--port <n>', 'the port (0 picks a free one)', String(defaultServePort))
    .option(
      '--host <address>',
      'the interface to listen on (set OPFLOW_SERVE_TOKEN beyond loopback)',
      '127.0.0.1',
    )
    .option('--mcp', 'also serve the MCP server for agents at /mcp (Streamable HTTP, same token rule)')
    .option(
      '--config <file>',
      'webhook mappings and schedules (env OPFLOW_CONFIG; default ./opflow.config.json)',
    )
    .addHelpText(
      'after',
      `
The dashboard (web page) is at / (see docs/guides/dashboard.md).
Routes (described in OpenAPI at GET /openapi.json): GET /health, POST /jobs,
GET /jobs (?status=&workflow=&batchId=&tenant=&source=&since=&until=&q=&limit=&cursor=), GET /jobs/{id},
POST /jobs/{id}/selection, POST /jobs/{id}/cancel, POST /jobs/{id}/retry ({"fromStart": true} optional),
GET /jobs/{id}/report (where the files are), GET /jobs/{id}/report/{file} (the file itself),
GET /jobs/{id}/timeline (the steps with their figures), GET /jobs/{id}/input (its input, to run again),
POST /batch-uploads/check (a manifest's text checked line by line, with its cost estimate; nothing stored),
POST /batch-uploads (the same, kept beside the database and started as a batch),
GET /batches, GET /batches/{id}, POST /batches/{id}/redrive, POST /batches/{id}/cancel,
GET /batches/{id}/outputs/{file} (summary.csv, results.jsonl, failed.jsonl, index.html),
GET /schedules, POST /schedules/{name}/trigger, POST /schedules/{name}/pause ({"reason": "..."}),
POST /schedules/{name}/resume, GET /webhook-deliveries (?source=&limit=&cursor=),
POST /webhooks/{source} (Standard Webhooks signature with OPFLOW_WEBHOOK_SECRET_<SOURCE>; no token),
POST /mcp (with --mcp). It also runs the schedules of the config file and keeps active batches going.
With OPFLOW_SERVE_TOKEN set, every request needs the header Authorization: Bearer <token>.
Callbacks (callbackUrl) link the report files to GET /jobs/{id}/report/{file} at OPFLOW_PUBLIC_URL
(where receivers reach this server; no links without it); see docs/guides/callbacks.md.
The first line on standard output is the URL; requests are logged on standard error.`,
    )
    .action(async (_options: unknown, command: Command) => {
      setExitCode(await (await import('./commands/serve')).serveCommand(ctx, globals(command) as never));
    });

  registerCallbackCommands(program, ctx, setExitCode);
  registerWebhookCommands(program, ctx, setExitCode);
  registerScheduleCommands(program, ctx, setExitCode);
  registerOperationsCommand(program, ctx, setExitCode);
  registerCallCommand(program, ctx, setExitCode);

  return program;
}
