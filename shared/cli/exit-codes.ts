/**
 * The `opflow` command's exit codes, for scripts. `opflow --help` lists them too.
 */
export const ExitCode = {
  /** Everything asked for was done (every job of the run succeeded). */
  ok: 0,
  /** Work ran, but a job failed or was cancelled, or some inputs were refused. */
  jobFailed: 1,
  /** The command was wrong: unknown command, option, workflow or value; no usable input. */
  usage: 2,
  /** A job waits for a person's selection: answer with `opflow resume <jobId> --select ...`. */
  awaitingInput: 3,
  /** No such job, or no report yet. */
  notFound: 4,
  /** The environment is wrong: configuration, database, sandbox, network, backend. */
  environment: 5,
  /** Interrupted (Ctrl-C). Nothing is lost: `opflow resume` continues. */
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** The table printed at the end of `opflow --help`. */
export const exitCodeHelp = `Exit codes:
  0    everything asked for was done
  1    a job failed or was cancelled, or some inputs were refused
  2    usage error (unknown command, option, workflow or value; no usable input)
  3    a job waits for a selection: opflow resume <jobId> --select <ids>
  4    no such job, or no report yet
  5    configuration or environment error (database, sandbox, network, backend)
  130  interrupted; nothing is lost, opflow resume continues`;

/** An error that ends the command with a given exit code and a message for people. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue,
  ) {
    super(message);
  }
}
