/**
 * `opflow mcp`: the MCP server on standard input and output, for an agent's MCP client to start.
 * On the local backend it runs the workers in this process, as `opflow serve` does, so a job an
 * agent submits runs with nothing else started (and any other opflow process of the same database
 * shares the work safely: claims are leased, commits are conditional). On aws the jobs run in the
 * stack's Lambda functions and this process only reads and writes job records.
 *
 * Standard output carries only the protocol; every line for people goes to standard error.
 */
import { Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { startBatchRunner } from '../../dashboard/batch-runner';
import { localSecretSources } from '../../http/webhook-sources';
import { createOpflowMcpServer, ingestRootsFrom } from '../../mcp/server';
import { type CliContext, type GlobalOptions, openBackend } from '../context';
import { ExitCode, type ExitCodeValue } from '../exit-codes';
import { readConfigFile } from '../serve-extras';

export async function mcpCommand(ctx: CliContext, options: GlobalOptions): Promise<ExitCodeValue> {
  const { io } = ctx;
  const say = (line: string) => {
    if (!options.quiet) io.stderr.write(`opflow mcp: ${line}\n`);
  };
  // The webhook sources of the config file (OPFLOW_CONFIG, ./opflow.config.json), for list_webhook_sources.
  const { config } = await readConfigFile(ctx, undefined);
  const backend = await openBackend(ctx, options, 'work');
  const here = backend.work.where === 'here' ? backend.work : undefined;
  // Locally, batches go on in this process (admission rounds, ingests started with the ingest tool).
  const batches = here ? await backend.batches() : undefined;
  const batchRunner = batches ? startBatchRunner({ deps: backend.deps, batches }) : undefined;
  const server = createOpflowMcpServer({
    deps: backend.deps,
    batches,
    batchRunner,
    cwd: io.cwd,
    ingestRoots: ingestRootsFrom(io.env, io.cwd),
    webhookSources: {
      webhooks: config.webhooks,
      deliveries: await backend.webhookDeliveries(),
      secretSources: localSecretSources(io.env),
    },
  });
  const transport = new StdioServerTransport(process.stdin, writableOf(io.stdout));
  let stopListening = () => {};
  try {
    const ended = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
      // The client closing our standard input is how it says goodbye.
      process.stdin.once('end', () => resolve());
      stopListening = io.onInterrupt(() => resolve());
    });
    await server.connect(transport);
    here?.start();
    say(`ready on standard input/output (${backend.description})`);
    await ended;
    say('stopping: waiting for the steps in progress');
  } finally {
    stopListening();
    await server.close().catch(() => {});
    await batchRunner?.stop();
    await backend.close();
  }
  return ExitCode.ok;
}

/** The command's standard output as the stream class the transport writes to (tests inject a plain one). */
function writableOf(stream: NodeJS.WritableStream): Writable {
  if (stream instanceof Writable) return stream;
  return new Writable({
    write: (chunk, _encoding, done) => {
      stream.write(chunk, (error) => done(error ?? undefined));
    },
  });
}
