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
import { webhookSourceRoutes } from '../../dashboard/webhook-source-routes';
import type { BatchStore } from '../../engine/batch-store';
import { errorMessage } from '../../errors/error-message';
import type { ApiRoute } from '../../http/api-route';
import {
  isLoopbackHost,
  type JobApiServer,
  type ServerMount,
  startJobApiServer,
} from '../../http/node-server';
import { localSecretSources } from '../../http/webhook-sources';
import { mcpMount } from '../../mcp/http';
import { ingestRootsFrom } from '../../mcp/server';
import { redactUrl } from '../../openplatform/redact';
import { envReviewerSecrets, ReviewerSecretError } from '../../reviewers/reviewer-secrets';
import { prepareReviewers, type ServedReviewers } from '../../reviewers/serve-reviewers';
import type { WorkHere } from '../../runtime/backend';
import { listUnfinished } from '../../runtime/job-queries';
import { publicUrlVariable } from '../../runtime/local/callback-loop';
import { type CliContext, type GlobalOptions, openBackend } from '../context';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes';
import { eventsTokenTtlMs, prepareServeEvents, type ServeEvents } from '../serve-events';
import { prepareServeExtras, readConfigFile, type ServeExtras } from '../serve-extras';

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
  const listen = checkServeFlags(io.env, options);
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
  const reviewers = await openReviewers(ctx, backend, configFile);
  const batches = await backend.batches();
  // Batches go on while the server runs: admission rounds, and ingests started over MCP.
  const batchRunner = startBatchRunner({ deps: backend.deps, batches });
  const events = await prepareServeEvents(backend, batches, listen.token, listen.tokenTtlMs);
  const served: Served = {
    ctx,
    options,
    backend,
    here,
    configFile,
    extras,
    reviewers,
    batches,
    batchRunner,
    events,
  };
  let server: JobApiServer;
  try {
    server = await startJobApiServer({
      deps: backend.deps,
      host: listen.host,
      port: listen.port,
      token: listen.token,
      routes: [...events.routes, ...(await servedRoutes(served))],
      mounts: [events.mount, ...servedMounts(served)],
      onRequest: (entry) => say(`${entry.method} ${entry.path} ${entry.status} (${entry.durationMs} ms)`),
    });
  } catch (error) {
    await events.close();
    await batchRunner.stop();
    await backend.close();
    throw new CliError(
      `cannot listen on ${listen.host}:${listen.port}: ${errorMessage(error)}`,
      ExitCode.environment,
    );
  }
  here.start();
  extras.start();
  // Links in notices must reach this server from where people read them: OPFLOW_PUBLIC_URL.
  reviewers?.start(io.env[publicUrlVariable]?.trim() || server.url);
  announce(served, server, listen.token, say);
  const stopListening = await untilInterrupted(io);
  say(
    'stopping: no new requests; waiting for the requests and steps in progress (Ctrl-C again stops at once)',
  );
  try {
    await stopServing(served, server, say);
  } finally {
    stopListening();
  }
  await backend.close();
  say('stopped');
  return ExitCode.ok;
}

/** What a running server holds, handed to the steps that build, announce and stop it. */
interface Served {
  ctx: CliContext;
  options: ServeOptions;
  backend: Awaited<ReturnType<typeof openBackend>>;
  here: WorkHere;
  configFile: Awaited<ReturnType<typeof readConfigFile>>;
  extras: ServeExtras;
  reviewers: ServedReviewers | undefined;
  batches: BatchStore;
  batchRunner: ReturnType<typeof startBatchRunner>;
  events: ServeEvents;
}

/** The flags and variables checked before anything opens: where to listen, and the token. */
function checkServeFlags(env: CliContext['io']['env'], options: ServeOptions) {
  if (options.backend !== 'local') {
    throw new CliError(
      "opflow serve runs jobs on the local backend; on aws the job API is the stack's HTTP API",
      ExitCode.usage,
    );
  }
  const port = parsePort(options.port);
  const host = options.host.trim();
  if (host === '') throw new CliError('--host must name an interface, e.g. 127.0.0.1', ExitCode.usage);
  const token = readServeToken(env);
  const tokenTtlMs = eventsTokenTtlMs(env);
  const refusal = exposureRefusal(host, token);
  if (refusal) throw new CliError(refusal, ExitCode.usage);
  return { port, host, token, tokenTtlMs };
}

/** The reviewers of the config file, when it names some; a missing secret is a usage error. */
async function openReviewers(
  ctx: CliContext,
  backend: Served['backend'],
  configFile: Served['configFile'],
): Promise<ServedReviewers | undefined> {
  try {
    return await prepareReviewers({
      deps: backend.deps,
      config: configFile.config.reviewers,
      secrets: envReviewerSecrets(ctx.io.env),
      policy: callbackPolicyFromEnv(ctx.io.env),
    });
  } catch (error) {
    await backend.close();
    if (error instanceof ReviewerSecretError || error instanceof SigningSecretError)
      throw new CliError(error.message, ExitCode.usage);
    throw error;
  }
}

/** The dashboard's routes beside the job API's: timelines, batches, schedules, deliveries, starts. */
async function servedRoutes(served: Served): Promise<ApiRoute[]> {
  const { backend, batches, configFile } = served;
  return [
    ...timelineRoutes({ deps: backend.deps, history: backend.history }),
    ...batchRoutes({ deps: backend.deps, batches }),
    ...scheduleRoutes({
      deps: backend.deps,
      states: await backend.scheduleStates(),
      schedules: configFile.config.schedules,
    }),
    ...deliveryRoutes({ deliveries: served.extras.deliveries }),
    ...webhookSourceRoutes({
      deps: backend.deps,
      webhooks: configFile.config.webhooks,
      deliveries: served.extras.deliveries,
      secretSources: localSecretSources(served.ctx.io.env),
    }),
    ...startRoutes({
      deps: backend.deps,
      batches,
      runner: served.batchRunner,
      uploadsFolder: uploadsFolderOf(served.here.dbPath),
    }),
  ];
}

/** The dashboard, MCP (with --mcp), the webhooks and the reviewers' confirmation page. */
function servedMounts(served: Served): ServerMount[] {
  const { backend, batches, ctx } = served;
  return [
    dashboardMount({
      deps: backend.deps,
      timeline: true,
      batches: true,
      schedules: served.configFile.config.schedules.length > 0,
      webhooks: true,
      starts: { jobs: true, rerun: true, manifests: true },
    }),
    ...(served.options.mcp
      ? [
          mcpMount({
            deps: backend.deps,
            batches,
            batchRunner: served.batchRunner,
            cwd: ctx.io.cwd,
            ingestRoots: ingestRootsFrom(ctx.io.env, ctx.io.cwd),
            webhookSources: {
              webhooks: served.configFile.config.webhooks,
              deliveries: served.extras.deliveries,
              secretSources: localSecretSources(ctx.io.env),
            },
          }),
        ]
      : []),
    ...served.extras.mounts,
    ...(served.reviewers ? [served.reviewers.mount] : []),
  ];
}

/** Where the server answers (standard output: a line, or JSON with --json), and what runs here. */
function announce(
  served: Served,
  server: JobApiServer,
  token: string | undefined,
  say: (line: string) => void,
) {
  const { options, backend, configFile } = served;
  const { io } = served.ctx;
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
  for (const line of served.extras.lines()) say(line);
  if (served.reviewers)
    say(
      `reviewers: notices and timeouts of ${configFile.config.reviewers?.rules.length} rule(s) are handled here`,
    );
}

/** Resolves at the first Ctrl-C (a second one exits at once); with the function that stops listening. */
async function untilInterrupted(io: CliContext['io']): Promise<() => void> {
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
  return stopListening;
}

/** Stops taking work and waits for what is in progress; says how many jobs are left unfinished. */
async function stopServing(served: Served, server: JobApiServer, say: (line: string) => void): Promise<void> {
  await served.extras.stop();
  await served.reviewers?.stop();
  await served.events.close();
  await server.close();
  await served.batchRunner.stop();
  await served.here.stop();
  const unfinished = (await listUnfinished(served.backend.deps.store)).length;
  if (unfinished > 0)
    say(`${unfinished} job${unfinished === 1 ? '' : 's'} unfinished (opflow list shows them)`);
}
