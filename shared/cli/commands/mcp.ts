/**
 * `opflow mcp`: the MCP server on standard input and output, for an agent's MCP client to start.
 * On the local backend it runs the workers in this process, as `opflow serve` does, so a job an
 * agent submits runs with nothing else started (and any other opflow process of the same database
 * shares the work safely: claims are leased, commits are conditional). On aws the jobs run in the
 * stack's Lambda functions and this process only reads and writes job records.
 *
 * Standard output carries only the protocol; every line for people goes to standard error.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { startBatchRunner } from '../../dashboard/batch-runner';
import { createOpflowMcpServer, ingestRootsFrom } from '../../mcp/server';
import { asLocal, type CliContext, type GlobalOptions, openPipeline } from '../context';
import { ExitCode, type ExitCodeValue } from '../exit-codes';

export async function mcpCommand(ctx: CliContext, options: GlobalOptions): Promise<ExitCodeValue> {
  const { io } = ctx;
  const say = (line: string) => {
    if (!options.quiet) io.stderr.write(`opflow mcp: ${line}\n`);
  };
  const pipeline = await openPipeline(ctx, options, 'work');
  const local = asLocal(pipeline);
  // Locally, batches go on in this process (admission rounds, ingests started with the ingest tool).
  const batches = local ? local.local.batches : undefined;
  const batchRunner = local && batches ? startBatchRunner({ deps: pipeline.deps, batches }) : undefined;
  const server = createOpflowMcpServer({
    deps: pipeline.deps,
    batches,
    batchRunner,
    cwd: io.cwd,
    ingestRoots: ingestRootsFrom(io.env, io.cwd),
  });
  const transport = new StdioServerTransport(process.stdin, io.stdout as NodeJS.WritableStream as never);
  let stopListening = () => {};
  try {
    const ended = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
      // The client closing our standard input is how it says goodbye.
      process.stdin.once('end', () => resolve());
      stopListening = io.onInterrupt(() => resolve());
    });
    await server.connect(transport);
    local?.start();
    say(`ready on standard input/output (${pipeline.description})`);
    await ended;
    say('stopping: waiting for the steps in progress');
  } finally {
    stopListening();
    await server.close().catch(() => {});
    await batchRunner?.stop();
    await pipeline.close();
  }
  return ExitCode.ok;
}
