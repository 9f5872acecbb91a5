/**
 * The `opflow` command: parses the command line (commander) and runs one command. bin/opflow.js
 * calls `main(process.argv)`; tests call it with their own streams and environment.
 */
import { CommanderError } from 'commander';
import type { WorkflowRegistry } from '../engine/workflow';
import { redactUrl } from '../openplatform/redact';
import { type CliContext, type CliIo, classifyError } from './context';
import { ExitCode, type ExitCodeValue } from './exit-codes';
import { buildProgram } from './program';
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
      const classified = classifyError(error, io.env);
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
