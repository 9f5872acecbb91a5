/**
 * `opflow run --stream`: the streamed answer of the run's one job printed on standard output as it
 * arrives (on by default when standard output is a terminal, unless --quiet or --json), told by the
 * engine of this process (Backend.onAnswerText). The summary and `--json` are unchanged; progress
 * lines stay on stderr, plain lines rather than bars while an answer streams to the terminal.
 */
import type { Job } from '../engine/job-record';
import type { Workflow } from '../engine/workflow';
import type { Backend } from '../runtime/backend';
import type { CliContext } from './context';
import { CliError, ExitCode } from './exit-codes';

export interface StreamChoice {
  /** `--stream` (true), or not given. */
  stream?: boolean | undefined;
  json?: boolean | undefined;
  quiet?: boolean | undefined;
}

/** Whether the workflow has a step that streams its answer (LLM chat, encyclopedia Q&A). */
export const streamsAnswers = (workflow: Workflow) => workflow.steps.some((step) => step.kind === 'stream');

/** Refuses `--stream` where it cannot print anything, before any job starts. */
export function checkStreamChoice(workflow: Workflow, options: StreamChoice): void {
  if (options.stream !== true) return;
  if (options.json)
    throw new CliError(
      '--stream prints the answer as text; --json keeps standard output for JSON',
      ExitCode.usage,
    );
  if (!streamsAnswers(workflow))
    throw new CliError(
      `--stream: ${workflow.name} streams no answer (llm-chat and encyclopedia-qa do)`,
      ExitCode.usage,
    );
}

/**
 * Prints the answer of the run's job as it streams, when asked or on a terminal; answers the
 * function that stops (ending the text with a line break), or undefined when nothing is printed.
 */
export function printStreamedAnswer(
  ctx: CliContext,
  backend: Backend,
  workflow: Workflow,
  jobs: readonly Job[],
  options: StreamChoice,
): (() => void) | undefined {
  const asked = options.stream === true;
  const wanted = options.stream ?? (Boolean(ctx.io.stdout.isTTY) && !options.json && !options.quiet);
  if (!wanted || !streamsAnswers(workflow)) return undefined;
  const say = (line: string) => ctx.io.stderr.write(`opflow: ${line}\n`);
  if (jobs.length !== 1) {
    if (asked)
      say(`--stream shows the answer of a run of one job; this run has ${jobs.length}, not streamed`);
    return undefined;
  }
  if (backend.work.where !== 'here') {
    if (asked)
      say(
        'on aws the jobs run in Lambda: the answer shows when the job finishes (GET /events carries it as it arrives)',
      );
    return undefined;
  }
  const jobId = jobs[0]!.id;
  let length = 0;
  let open = false;
  const out = ctx.io.stdout;
  const close = () => {
    if (open) out.write('\n');
    open = false;
  };
  const stopText = backend.onAnswerText((piece) => {
    if (piece.jobId !== jobId) return;
    // A stream sent again (it failed before it began) starts over: said, then printed from its start.
    if (piece.offset < length) {
      close();
      say('the answer is streamed again from its start');
    }
    out.write(piece.text);
    length = piece.offset + piece.text.length;
    open = !piece.text.endsWith('\n');
  });
  // A progress line of the job comes on a line of its own.
  const stopJobs = backend.onJobChange((job) => {
    if (job.id === jobId) close();
  });
  return () => {
    stopText();
    stopJobs();
    close();
  };
}
