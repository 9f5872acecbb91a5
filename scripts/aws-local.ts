/**
 * `npm run aws-local`: the aws backend end to end on this machine, no AWS account needed.
 *
 * Starts the emulators (fauxqs for SQS and S3, DynamoDB Local, the Secrets Manager stand-in of
 * scripts/emulators), creates the job table, the work queue with its dead-letter queue, the report
 * bucket and the tenant's API key secret, bundles the Lambda functions exactly as the CDK app does,
 * and drives them in real time the way AWS would: the step worker as the SQS event source does
 * (long-poll, batches of up to 10, failed records left to come back, the DLQ after 5 receives), the
 * sweeper every minute as its schedule does, the callback sender on the job table's stream as its
 * event source mapping does (the outbox entries that come due: nothing runs while none is), the ingest
 * function invoked asynchronously as on AWS (S3's event notification for `inbox/`, read from the
 * synthesized template, sent by a proxy in front of fauxqs' S3 that every client here uses; its own
 * and the sweeper's invocations through a local Lambda Invoke endpoint; Lambda's retries and its
 * on-failure queue as the template sets them), the schedules function at every slot of the config
 * file's schedules (as EventBridge Scheduler does), and the api function behind a local HTTP API whose
 * webhook route goes to the webhooks function, with the config file's webhook mappings and the
 * secrets of OPFLOW_WEBHOOK_SECRET_<SOURCE>, and the events function on the job table's stream (read
 * four times a second, as Lambda's stream poller does), so `GET /events` answers its long poll. The
 * upstream is the built-in sandbox of the Open Platform API (its tasks `--sandbox-speed` times faster,
 * default 30) unless OPFLOW_API_KEY is set, then the real platform with that key.
 *
 * It prints the environment for `opflow --backend aws ...` and writes it to `<dir>/aws-local.env`
 * (`set -a; . .opflow/aws-local/aws-local.env; set +a`); the functions' JSON logs and metrics go to
 * `<dir>/functions.log`. Ctrl-C (or SIGTERM) stops everything; nothing is kept.
 *
 * `--timeline <file>` writes one JSON line per SQS-triggered invocation (its records' SentTimestamp,
 * when the receive answered, the handler ran and the deletes were answered): where a job's time goes.
 *
 *   npm run aws-local [-- --dir .opflow/aws-local] [--workers 5] [--sandbox-speed 30] [--config opflow.config.json] [--timeline file]
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { parseStageConfig, stageDefaults } from '../infra/config';
import { CALLBACK_DUE_FILTER } from '../infra/lib/automation';
import { JOB_CHANGE_FILTER } from '../infra/lib/live-events';
import { loadOpflowConfig, type OpflowConfig, webhookSecretVariable } from '../shared/config/opflow-config';
import { errorMessage } from '../shared/errors/error-message';
import { webhookPathPattern } from '../shared/http/webhooks';
import { scaledTaskDurations } from '../shared/runtime/local/sandbox-launch';
import { SANDBOX_API_KEY, startSandbox } from '../shared/sandbox';
import { synthesizeTemplate } from './cost-idle';
import { type AwsEmulators, startAwsEmulators } from './emulators/aws-emulators';
import { type ApiGateway, startApiGateway } from './lambda/api-gateway';
import type { AsyncHandler } from './lambda/async-invoke';
import { bundleFunctions, type FunctionBundles } from './lambda/bundle-functions';
import { DynamoDbStreamSource, type StreamHandler } from './lambda/dynamodb-stream-source';
import { startIngestDelivery } from './lambda/ingest-delivery';
import { type IngestDeliveryRules, ingestDeliveryRules } from './lambda/ingest-rules';
import { lambdaContext, scheduledEvent } from './lambda/lambda-events';
import { type ScheduleTarget, startScheduleClock } from './lambda/schedule-clock';
import {
  type Invocation,
  type InvocationTiming,
  SqsEventSource,
  type WorkerHandler,
} from './lambda/sqs-event-source';

const SECRET_PREFIX = 'opflow/local/api-key/';
const CALLBACK_SECRET_PREFIX = 'opflow/local/callback-signing/';
const WEBHOOK_SECRET_PREFIX = 'opflow/local/webhook/';
/** The stack's worker timeout is 60 s; SQS redelivers after the visibility timeout. */
const WORKER_TIMEOUT_MS = 60_000;
/** The stack's callback sender timeout. */
const CALLBACKS_TIMEOUT_MS = 70_000;
const SWEEP_EVERY_MS = 60_000;
/** The dev stage's step worker event source: records per batch and instances at most, as deployed. */
const DEV_WORKER = parseStageConfig(stageDefaults.dev).worker;

const optionsSchema = z.object({
  dir: z.string().trim().min(1),
  workers: z.coerce.number().int().min(1).max(16),
  sandboxSpeed: z.coerce.number().min(1).max(10_000),
  config: z.string().trim().min(1).optional(),
  timeline: z.string().trim().min(1).optional(),
});

function readOptions(): z.infer<typeof optionsSchema> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string', default: '.opflow/aws-local' },
      workers: { type: 'string', default: String(DEV_WORKER.maxConcurrency) },
      'sandbox-speed': { type: 'string', default: '30' },
      config: { type: 'string' },
      timeline: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'npm run aws-local [-- --dir .opflow/aws-local] [--workers 5] [--sandbox-speed 30] [--config opflow.config.json] [--timeline file]\n' +
        'Runs the aws backend on emulators (all eight functions: api, webhooks, step worker, sweeper, ingest, events,\n' +
        'schedules, callbacks) and prints the environment for opflow --backend aws. --config (default OPFLOW_CONFIG,\n' +
        'else ./opflow.config.json when there is one): the schedules and webhook mappings the functions serve.\n' +
        '--timeline <file>: one JSON line per SQS-triggered invocation (sent, received, handler start and end, deleted).\n',
    );
    process.exit(0);
  }
  const parsed = optionsSchema.safeParse({
    dir: values.dir,
    workers: values.workers,
    sandboxSpeed: values['sandbox-speed'],
    config: values.config,
    timeline: values.timeline,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `--${String(issue?.path[0] ?? '').replace('sandboxSpeed', 'sandbox-speed')}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

type Handler<E, R> = (event: E, context: ReturnType<typeof lambdaContext>) => Promise<R>;

async function main(): Promise<void> {
  const options = readOptions();
  const dir = path.resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const logFile = path.join(dir, 'functions.log');
  writeFileSync(logFile, '');
  const say = (line: string) => process.stderr.write(`aws-local: ${line}\n`);

  const stops: (() => Promise<unknown>)[] = [];
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping');
    for (const close of stops.reverse()) await close().catch(() => undefined);
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    const apiKey = process.env.OPFLOW_API_KEY?.trim();
    const { config, file: configFile } = await readConfig(options.config);
    say('starting fauxqs (SQS, S3), DynamoDB Local and the Secrets Manager stand-in; bundling the functions');
    const [emulators, bundles, sandbox] = await Promise.all([
      startAwsEmulators(),
      bundleFunctions(),
      apiKey
        ? undefined
        : startSandbox({
            taskDurations: scaledTaskDurations(options.sandboxSpeed),
            keys: [{ key: SANDBOX_API_KEY }],
          }),
    ]);
    stops.push(
      () => emulators.stop(),
      () => bundles.remove(),
    );
    if (sandbox) stops.push(() => sandbox.close());

    const provisioned = await provision(
      emulators,
      apiKey ?? SANDBOX_API_KEY,
      sandbox?.url ?? process.env.OPFLOW_BASE_URL,
    );
    // The ingest function is loaded with the others below; its invocations wait for it until then.
    let ingestHandler: AsyncHandler | undefined;
    const inbox = await startInboxDelivery(
      emulators,
      provisioned.OPFLOW_BUCKET_NAME!,
      (event, context) => {
        if (!ingestHandler) throw new Error('the ingest function is not loaded yet');
        return ingestHandler(event, context);
      },
      (error) => say(`ingest: ${errorMessage(error)}`),
    );
    stops.push(() => inbox.stop());
    const env = { ...provisioned, ...inbox.env };
    // The bundled functions read their settings from the environment at load, as in Lambda; the
    // schedules and webhook mappings as the stack's config item would give them.
    Object.assign(process.env, env, automationEnv(emulators, config, say), {
      // The step worker polls the sped-up sandbox as often per task as the platform, sooner (as locally).
      ...(sandbox ? { OPFLOW_SANDBOX_SPEED: String(options.sandboxSpeed) } : {}),
      POWERTOOLS_SERVICE_NAME: 'opflow',
      POWERTOOLS_METRICS_NAMESPACE: 'opflow',
      AWS_LAMBDA_FUNCTION_NAME: 'opflow-local',
    });
    keepFunctionOutputIn(logFile);

    const timeline = options.timeline ? path.resolve(options.timeline) : undefined;
    if (timeline) writeFileSync(timeline, '');
    const running = await startFunctions({
      onIngest: (handler) => {
        ingestHandler = handler;
      },
      bundles,
      emulators,
      env,
      config,
      workers: options.workers,
      say,
      onInvocation: timeline ? (line) => appendFileSync(timeline, `${JSON.stringify(line)}\n`) : undefined,
    });
    stops.push(() => running.gateway.close());
    stops.push(async () => {
      running.stop();
      await Promise.allSettled(running.loops);
    });
    const isStopping = () => stopping;
    running.startLoops(isStopping);

    const envFile = path.join(dir, 'aws-local.env');
    const lines = Object.entries({ ...env, OPFLOW_API_URL: running.gateway.url }).map(
      ([name, value]) => `${name}=${value}`,
    );
    writeFileSync(envFile, `${lines.join('\n')}\n`, { mode: 0o600 });
    // The stack's outputs as `cdk deploy --outputs-file` writes them, so what reads a deployed stack's
    // outputs (`npm run smoke:aws -- --stack opflow-local`) reads this one the same way.
    const outputsFile = path.join(dir, 'outputs.json');
    writeFileSync(
      outputsFile,
      `${JSON.stringify({ [LOCAL_STACK_NAME]: localOutputs(env, running.gateway.url) }, null, 2)}\n`,
    );
    process.stdout.write(
      `# opflow aws backend on this machine (emulators; ${sandbox ? `built-in sandbox at ${sandbox.url}` : 'the Open Platform with your OPFLOW_API_KEY'})\n` +
        `# In another shell:  set -a; . ${envFileShown(envFile)}; set +a\n` +
        `#                    npx opflow --backend aws run novelty-check examples/disclosures\n` +
        `# The job API (the api function): ${running.gateway.url}/jobs   Function logs: ${logFile}\n` +
        `# Its outputs, as cdk deploy --outputs-file writes them: ${outputsFile} (stack ${LOCAL_STACK_NAME})\n` +
        lines.map((line) => `export ${line}`).join('\n') +
        '\n',
    );
    const automation = configFile
      ? `${config.schedules.length} schedule(s) and ${Object.keys(config.webhooks).length} webhook mapping(s) of ${configFile}`
      : 'no opflow.config.json: no schedules or webhook mappings';
    say(
      `ready: ${options.workers} step worker instance(s), the sweeper every minute, the ingest function on S3's notification for inbox/, the callback sender on the table's stream, the schedules function at its slots, the api and webhooks functions at ${running.gateway.url}; ${automation} (Ctrl-C stops)`,
    );
  } catch (error) {
    say(`failed: ${errorMessage(error)}`);
    await stop(1);
  }
}

/** The stack name aws-local's outputs file gives its stack. */
const LOCAL_STACK_NAME = 'opflow-local';

/** The outputs a deployed stack has that aws-local has too (ApiUrl ends with a slash, as API Gateway's). */
function localOutputs(env: Record<string, string>, apiUrl: string): Record<string, string> {
  const outputs: Record<string, string | undefined> = {
    ApiUrl: `${apiUrl.replace(/\/$/, '')}/`,
    TableName: env.OPFLOW_TABLE_NAME,
    QueueUrl: env.OPFLOW_QUEUE_URL,
    BucketName: env.OPFLOW_BUCKET_NAME,
    ApiKeySecretPrefix: env.OPFLOW_API_KEY_SECRET_PREFIX,
  };
  return Object.fromEntries(
    Object.entries(outputs).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/** The config file's schedules and webhook mappings (none without a file); an invalid file stops the start. */
async function readConfig(explicit: string | undefined) {
  const { workflows } = await import('../shared/workflows');
  return loadOpflowConfig({ explicit, env: process.env, cwd: process.cwd(), workflows });
}

/**
 * The functions' view of the config file, as the stack's config item gives it: its schedules, its
 * webhook mappings, and each source's signing secret (from OPFLOW_WEBHOOK_SECRET_<SOURCE>, as
 * `opflow serve` reads it) in Secrets Manager. A source without a secret is said; its deliveries are refused.
 */
function automationEnv(
  emulators: AwsEmulators,
  config: OpflowConfig,
  say: (line: string) => void,
): Record<string, string> {
  const sources = Object.keys(config.webhooks);
  for (const source of sources) {
    const variable = webhookSecretVariable(source);
    const secret = process.env[variable]?.trim();
    if (secret) emulators.secretsManager!.setSecret(`${WEBHOOK_SECRET_PREFIX}${source}`, secret);
    else say(`webhook source ${source}: ${variable} is not set, so its deliveries are refused`);
  }
  return {
    ...(config.schedules.length > 0 ? { OPFLOW_SCHEDULES: JSON.stringify(config.schedules) } : {}),
    ...(sources.length > 0
      ? {
          OPFLOW_WEBHOOK_MAPPINGS: JSON.stringify(config.webhooks),
          OPFLOW_WEBHOOK_SECRET_PREFIX: WEBHOOK_SECRET_PREFIX,
        }
      : {}),
  };
}

interface RunningFunctions {
  gateway: ApiGateway;
  loops: Promise<void>[];
  startLoops(isStopping: () => boolean): void;
  stop(): void;
}

/** Loads every function and the event sources, schedules and gateway that drive them. */
async function startFunctions(options: {
  bundles: FunctionBundles;
  emulators: AwsEmulators;
  env: Awaited<ReturnType<typeof provision>>;
  config: OpflowConfig;
  /** Hands over the loaded ingest function (its invocations come from the inbox delivery). */
  onIngest: (handler: AsyncHandler) => void;
  workers: number;
  say: (line: string) => void;
  /** Each SQS-triggered invocation's timeline line (`--timeline`). */
  onInvocation?: ((line: TimelineLine) => void) | undefined;
}): Promise<RunningFunctions> {
  const { bundles, emulators, env, config, say } = options;
  const workers: WorkerHandler[] = [];
  for (let i = 0; i < options.workers; i++)
    workers.push((await load<{ handler: WorkerHandler }>(bundles, 'worker')).handler);
  const sweeper = await load<{ handler: Handler<unknown, { requeued: number; expired: number }> }>(
    bundles,
    'sweeper',
  );
  const callbacks = (await load<{ handler: StreamHandler }>(bundles, 'callbacks')).handler;
  options.onIngest((await load<{ handler: AsyncHandler }>(bundles, 'ingest')).handler);
  const schedules = (await load<{ handler: ScheduleTarget }>(bundles, 'schedules')).handler;
  const api = await load<{ handler: Parameters<typeof startApiGateway>[0] }>(bundles, 'api');
  const webhooks = await load<{ handler: Parameters<typeof startApiGateway>[0] }>(bundles, 'webhooks');
  const events = (await load<{ handler: StreamHandler }>(bundles, 'events')).handler;
  // The job table's stream, filtered to job items as the stack's event source mapping is.
  const stream = new DynamoDbStreamSource({
    endpoint: emulators.dynamoDb!.endpoint,
    region: emulators.region,
    credentials: { accessKeyId: 'test' },
    tableName: env.OPFLOW_TABLE_NAME!,
    filters: [JOB_CHANGE_FILTER],
    functionName: 'opflow-events',
  });
  await stream.start();
  // Its second reader, as on AWS: the callback function, handed the outbox entries written or marked due.
  const callbackStream = new DynamoDbStreamSource({
    endpoint: emulators.dynamoDb!.endpoint,
    region: emulators.region,
    credentials: { accessKeyId: 'test' },
    tableName: env.OPFLOW_TABLE_NAME!,
    filters: [CALLBACK_DUE_FILTER],
    functionName: 'opflow-callback-sender',
    functionTimeoutMs: CALLBACKS_TIMEOUT_MS,
  });
  await callbackStream.start();
  // As the stack integrates it: the webhook route with its own function, every other route with the api.
  const gateway = await startApiGateway(api.handler, {
    otherFunctions: [
      { path: webhookPathPattern, functionName: 'opflow-webhooks', handler: webhooks.handler },
    ],
  });

  const loops: Promise<void>[] = [];
  let sweep: NodeJS.Timeout | undefined;
  let clock: { stop(): void } | undefined;
  return {
    gateway,
    loops,
    startLoops(isStopping) {
      /** An event source on `queueUrl` with one poller per instance, each taking one batch at a time, as Lambda's do. */
      const pollers = (
        label: string,
        functionName: string,
        queueUrl: string,
        timeoutMs: number,
        batchSize: number,
        handlers: WorkerHandler[],
      ) => {
        const source = new SqsEventSource({
          sqs: emulators.clients.sqs,
          queueUrl,
          queueArn: `arn:aws:sqs:${emulators.region}:000000000000:${queueUrl.split('/').pop()}`,
          batchSize,
          functionName,
          waitTimeSeconds: 1,
          functionTimeoutMs: timeoutMs,
          onInvocation: options.onInvocation
            ? (invocation) => options.onInvocation?.(timelineLine(functionName, invocation))
            : undefined,
        });
        return handlers.map(async (handler) => {
          while (!isStopping()) {
            try {
              await source.poll(handler);
            } catch (error) {
              if (!isStopping()) say(`${label}: ${errorMessage(error)}`);
              await new Promise((resolve) => setTimeout(resolve, 1_000));
            }
          }
        });
      };
      loops.push(
        ...pollers(
          'event source',
          'opflow-step-worker',
          env.OPFLOW_QUEUE_URL,
          WORKER_TIMEOUT_MS,
          DEV_WORKER.batchSize,
          workers,
        ),
      );
      loops.push(
        (async () => {
          while (!isStopping()) {
            try {
              await stream.drain(events);
            } catch (error) {
              if (!isStopping()) say(`events stream: ${errorMessage(error)}`);
            }
            try {
              await callbackStream.drain(callbacks);
            } catch (error) {
              if (!isStopping()) say(`callback stream: ${errorMessage(error)}`);
            }
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
        })(),
      );
      sweep = setInterval(() => {
        sweeper.handler(scheduledEvent(), lambdaContext('opflow-sweeper', 60_000)).catch((error: unknown) => {
          say(`sweeper: ${errorMessage(error)}`);
        });
      }, SWEEP_EVERY_MS);
      clock = startScheduleClock(config.schedules, schedules, (schedule, error) =>
        say(`schedule ${schedule.name}: ${errorMessage(error)}`),
      );
    },
    stop() {
      clearInterval(sweep);
      clock?.stop();
    },
  };
}

/** One SQS-triggered invocation in `--timeline`'s file: its records and when each of its steps happened. */
export interface TimelineLine extends InvocationTiming {
  function: string;
  bodies: string[];
  failed: number;
}

function timelineLine(functionName: string, invocation: Invocation): TimelineLine {
  return {
    function: functionName,
    bodies: invocation.bodies,
    failed: invocation.failed,
    ...invocation.timing,
  };
}

/** Creates the table, the queues with their DLQs, the bucket and the tenant's key secret; the environment of the stack's outputs. */
async function provision(
  emulators: AwsEmulators,
  apiKey: string,
  baseUrl: string | undefined,
): Promise<Record<string, string> & { OPFLOW_QUEUE_URL: string }> {
  const table = await emulators.createTable();
  // Visibility timeout at six times the worker's timeout, as the stack sets it; the DLQ after 5 receives.
  const queue = emulators.createQueue({
    visibilityTimeoutSeconds: (6 * WORKER_TIMEOUT_MS) / 1000,
    maxReceiveCount: 5,
  });
  const bucket = emulators.createBucket();
  emulators.secretsManager!.setSecret(`${SECRET_PREFIX}default`, JSON.stringify({ apiKey }));
  // The default tenant's callback signing key (`opflow --backend aws callbacks secret` prints it).
  emulators.secretsManager!.setSecret(
    `${CALLBACK_SECRET_PREFIX}default`,
    randomBytes(32).toString('base64url'),
  );
  return {
    OPFLOW_TABLE_NAME: table,
    OPFLOW_QUEUE_URL: queue.queueUrl,
    OPFLOW_BUCKET_NAME: bucket,
    OPFLOW_API_KEY_SECRET_PREFIX: SECRET_PREFIX,
    OPFLOW_CALLBACK_SECRET_PREFIX: CALLBACK_SECRET_PREFIX,
    ...(baseUrl ? { OPFLOW_BASE_URL: baseUrl } : {}),
    ...emulators.environment(),
  };
}

/**
 * The ingest function's delivery, as the synthesized dev template sets it: its on-failure queue, its
 * asynchronous invocations (handed to `handler` once it is loaded), the Lambda Invoke endpoint, and
 * S3's notification for `inbox/` (the proxy every client of this stack uses as its S3 endpoint).
 * The environment that points the functions and the CLI at them.
 */
async function startInboxDelivery(
  emulators: AwsEmulators,
  bucket: string,
  handler: AsyncHandler,
  onError: (error: unknown) => void,
): Promise<{ env: Record<string, string>; rules: IngestDeliveryRules; stop(): Promise<void> }> {
  const rules = ingestDeliveryRules(synthesizeTemplate({ stage: 'dev' }).template.Resources as never);
  const delivery = await startIngestDelivery(emulators, bucket, rules, handler);
  const running = delivery.invoker.start(onError);
  return {
    rules,
    env: delivery.env,
    async stop() {
      await running.stop();
      await delivery.close();
    },
  };
}

/** Loads a new instance of a bundled function, failing with its name if it will not load. */
async function load<T>(bundles: FunctionBundles, name: string): Promise<T> {
  try {
    return await bundles.load<T>(name);
  } catch (error) {
    throw new Error(`the ${name} function did not load: ${errorMessage(error)}`);
  }
}

/** The functions' JSON lines (Powertools logs, EMF metrics) go to `file`; everything else stays on the terminal. */
function keepFunctionOutputIn(file: string): void {
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (text.startsWith('{')) {
        appendFileSync(file, text.endsWith('\n') ? text : `${text}\n`);
        return true;
      }
      return original(chunk, ...rest);
    }) as typeof stream.write;
  }
}

await main();

/** The env file as the user can type it: relative below the current folder, absolute otherwise. */
function envFileShown(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}
