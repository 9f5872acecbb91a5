/**
 * `opflow serve [--port N] [--host ADDRESS]`: the job HTTP API (the routes of the AWS one) on this
 * machine, with the local workers running the jobs it takes, until Ctrl-C or SIGTERM. The first
 * line on standard output is the URL; requests are logged on standard error (method, path, status).
 */
import * as z from 'zod';
import { callbackPolicyFromEnv } from '../../callbacks/ssrf-guard';
import { SigningSecretError } from '../../config/signing-secrets';
import { batchRoutes } from '../../dashboard/batch-routes';
import { startBatchRunner } from '../../dashboard/batch-runner';
import { deliveryRoutes } from '../../dashboard/delivery-routes';
import { dashboardMount } from '../../dashboard/mount';
import { scheduleRoutes } from '../../dashboard/schedule-routes';
import { startRoutes, uploadsFolderOf } from '../../dashboard/start-routes';
import { timelineRoutes } from '../../dashboard/timeline-route';
import { errorMessage } from '../../errors/error-message';
import { isLoopbackHost, type JobApiServer, startJobApiServer } from '../../http/node-server';
import { mcpMount } from '../../mcp/http';
import { ingestRootsFrom } from '../../mcp/server';
import { redactUrl } from '../../openplatform/redact';
import { envReviewerSecrets, ReviewerSecretError } from '../../reviewers/reviewer-secrets';
import { prepareReviewers, type ServedReviewers } from '../../reviewers/serve-reviewers';
import { listUnfinished } from '../../runtime/job-queries';
import { publicUrlVariable } from '../../runtime/local/callback-loop';
import { type CliContext, type GlobalOptions, openBackend } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { eventsTokenTtlMs, prepareServeEvents } from '../serve-events';
import { prepareServeExtras, readConfigFile } from '../serve-extras';

export interface ServeOptions extends GlobalOptions {
  port: string;
  host: string;
  mcp?: boolean | undefined;
  config?: string | undefined;
}

/** The variable holding the bearer token the server requires, when set. */
export const serveTokenVariable = 'OPFLOW_SERVE_TOKEN';

const serveTokenSchema = z
  .string()
  .min(16, 'must be at least 16 characters (e.g. `openssl rand -hex 32`)')
  .max(512, 'must be at most 512 characters')
  .regex(/^[\x21-\x7e]+$/, 'may hold only visible ASCII characters (it travels in an HTTP header)');

/** The token from the environment: undefined when unset or empty; a usage error when unfit. */
export function readServeToken(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const value = env[serveTokenVariable];
  if (value === undefined || value === '') return undefined;
  const parsed = serveTokenSchema.safeParse(value);
  if (!parsed.success) {
    // The message names the variable and the rule, never the value.
    throw new CliError(`${serveTokenVariable} ${parsed.error.issues[0]?.message}`, ExitCode.usage);
  }
  return parsed.data;
}

/** `--port`: a whole number from 0 (a free port) to 65535. */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new CliError(`--port must be a port number (0 to 65535), not "${value}"`, ExitCode.usage);
  }
  return port;
}

/**
 * Why a server other machines may reach cannot start without a token (anyone reaching the port, or
 * any web page through DNS rebinding, could create and cancel jobs); undefined when it may start.
 */
export function exposureRefusal(host: string, token: string | undefined): string | undefined {
  if (token !== undefined || isLoopbackHost(host)) return undefined;
  return `--host ${host} reaches beyond this machine: set ${serveTokenVariable} (e.g. \`export ${serveTokenVariable}=$(openssl rand -hex 32)\`) so that only callers with the token are answered, or listen on 127.0.0.1`;
}

export async function serveCommand(ctx: CliContext, options: ServeOptions): Promise<ExitCodeValue> {
  const { io } = ctx;
  if (options.backend !== 'local') {
    throw new CliError(
      "opflow serve runs jobs on the local backend; on aws the job API is the stack's HTTP API",
      ExitCode.usage,
    );
  }
  const port = parsePort(options.port);
  const host = options.host.trim();
  if (host === '') throw new CliError('--host must name an interface, e.g. 127.0.0.1', ExitCode.usage);
  const token = readServeToken(io.env);
  const tokenTtlMs = eventsTokenTtlMs(io.env);
  const refusal = exposureRefusal(host, token);
  if (refusal) throw new CliError(refusal, ExitCode.usage);
  const say = (line: string) => {
    if (!options.quiet) io.stderr.write(`opflow serve: ${line}\n`);
  };

  const configFile = await readConfigFile(ctx, options.config);
  const backend = await openBackend(ctx, options, 'work');
  if (backend.work.where !== 'here') {
    await backend.close();
    throw new CliError('opflow serve runs jobs in this process', ExitCode.usage);
  }
  const here = backend.work;
  const extras = await prepareServeExtras(ctx, backend, configFile, say);
  let reviewers: ServedReviewers | undefined;
  try {
    reviewers = await prepareReviewers({
      deps: backend.deps,
      config: configFile.config.reviewers,
      secrets: envReviewerSecrets(io.env),
      policy: callbackPolicyFromEnv(io.env),
    });
  } catch (error) {
    await backend.close();
    if (error instanceof ReviewerSecretError || error instanceof SigningSecretError)
      throw new CliError(error.message, ExitCode.usage);
    throw error;
  }
  const batches = await backend.batches();
  // Batches go on while the server runs: admission rounds, and ingests started over MCP.
  const batchRunner = startBatchRunner({ deps: backend.deps, batches });
  const events = await prepareServeEvents(backend, batches, token, tokenTtlMs);
  let server: JobApiServer;
  try {
    server = await startJobApiServer({
      deps: backend.deps,
      host,
      port,
      token,
      routes: [
        ...events.routes,
        ...timelineRoutes({ deps: backend.deps, history: backend.history }),
        ...batchRoutes({ deps: backend.deps, batches }),
        ...scheduleRoutes({
          deps: backend.deps,
          states: await backend.scheduleStates(),
          schedules: configFile.config.schedules,
        }),
        ...deliveryRoutes({ deliveries: extras.deliveries }),
        ...startRoutes({
          deps: backend.deps,
          batches,
          runner: batchRunner,
          uploadsFolder: uploadsFolderOf(here.dbPath),
        }),
      ],
      mounts: [
        events.mount,
        dashboardMount({
          deps: backend.deps,
          timeline: true,
          batches: true,
          schedules: configFile.config.schedules.length > 0,
          webhooks: true,
          starts: { jobs: true, rerun: true, manifests: true },
        }),
        ...(options.mcp
          ? [
              mcpMount({
                deps: backend.deps,
                batches,
                batchRunner,
                cwd: io.cwd,
                ingestRoots: ingestRootsFrom(io.env, io.cwd),
              }),
            ]
          : []),
        ...extras.mounts,
        ...(reviewers ? [reviewers.mount] : []),
      ],
      onRequest: (entry) => say(`${entry.method} ${entry.path} ${entry.status} (${entry.durationMs} ms)`),
    });
  } catch (error) {
    await events.close();
    await batchRunner.stop();
    await backend.close();
    throw new CliError(`cannot listen on ${host}:${port}: ${errorMessage(error)}`, ExitCode.environment);
  }
  here.start();
  extras.start();
  // Links in notices must reach this server from where people read them: OPFLOW_PUBLIC_URL.
  reviewers?.start(io.env[publicUrlVariable]?.trim() || server.url);

  const auth = token === undefined ? 'none' : 'bearer';
  if (options.json) {
    const mcp = options.mcp ? `${server.url}/mcp` : undefined;
    io.stdout.write(
      `${JSON.stringify({ url: server.url, backend: redactUrl(backend.description), auth, mcp })}\n`,
    );
  } else {
    io.stdout.write(
      `opflow serve: job API at ${server.url} (${redactUrl(backend.description)}; Ctrl-C stops it)\n`,
    );
    say(`dashboard at ${server.url}/`);
    if (options.mcp) say(`MCP server at ${server.url}/mcp (Streamable HTTP)`);
  }
  for (const line of extras.lines()) say(line);
  if (reviewers)
    say(
      `reviewers: notices and timeouts of ${configFile.config.reviewers?.rules.length} rule(s) are handled here`,
    );

  let stopListening = () => {};
  await new Promise<void>((resolve) => {
    let interrupts = 0;
    stopListening = io.onInterrupt(() => {
      interrupts += 1;
      // A second Ctrl-C stops at once; nothing is lost, the next opflow process continues the jobs.
      if (interrupts === 1) resolve();
      else process.exit(ExitCode.interrupted);
    });
  });

  say(
    'stopping: no new requests; waiting for the requests and steps in progress (Ctrl-C again stops at once)',
  );
  try {
    await extras.stop();
    await reviewers?.stop();
    await events.close();
    await server.close();
    await batchRunner.stop();
    await here.stop();
    const unfinished = (await listUnfinished(backend.deps.store)).length;
    if (unfinished > 0)
      say(`${unfinished} job${unfinished === 1 ? '' : 's'} unfinished (opflow list shows them)`);
  } finally {
    stopListening();
  }
  await backend.close();
  say('stopped');
  return ExitCode.ok;
}
