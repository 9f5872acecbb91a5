/**
 * `npm run aws-local`: the aws backend end to end on this machine, no AWS account needed.
 *
 * Starts the emulators (fauxqs for SQS and S3, DynamoDB Local, the Secrets Manager stand-in of
 * scripts/emulators), creates the job table, the work queue with its dead-letter queue, the report
 * bucket and the tenant's API key secret, bundles the Lambda functions exactly as the CDK app does,
 * and drives them in real time the way AWS would: the step worker as the SQS event source does
 * (long-poll, batches of up to 10, failed records left to come back, the DLQ after 5 receives), the
 * sweeper every minute as its schedule does, the callback sender as its queue's event source does
 * (woken by messages only: nothing runs while no callback is due), and the api function behind a
 * local HTTP API. The
 * upstream is the built-in sandbox of the Open Platform API (its tasks `--sandbox-speed` times faster,
 * default 30) unless OPFLOW_API_KEY is set, then the real platform with that key.
 *
 * It prints the environment for `opflow --backend aws ...` and writes it to `<dir>/aws-local.env`
 * (`set -a; . .opflow/aws-local/aws-local.env; set +a`); the functions' JSON logs and metrics go to
 * `<dir>/functions.log`. Ctrl-C (or SIGTERM) stops everything; nothing is kept.
 *
 *   npm run aws-local [-- --dir .opflow/aws-local] [--workers 2] [--sandbox-speed 30]
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { errorMessage } from '../shared/errors/error-message';
import { scaledTaskDurations } from '../shared/runtime/local/sandbox-launch';
import { SANDBOX_API_KEY, startSandbox } from '../shared/sandbox';
import { type AwsEmulators, startAwsEmulators } from './emulators/aws-emulators';
import { type ApiGateway, startApiGateway } from './lambda/api-gateway';
import { bundleFunctions, type FunctionBundles } from './lambda/bundle-functions';
import { lambdaContext, scheduledEvent } from './lambda/lambda-events';
import { SqsEventSource, type WorkerHandler } from './lambda/sqs-event-source';

const SECRET_PREFIX = 'opflow/local/api-key/';
const CALLBACK_SECRET_PREFIX = 'opflow/local/callback-signing/';
/** The stack's worker timeout is 60 s; SQS redelivers after the visibility timeout. */
const WORKER_TIMEOUT_MS = 60_000;
/** The stack's callback sender timeout. */
const CALLBACKS_TIMEOUT_MS = 70_000;
const SWEEP_EVERY_MS = 60_000;

const optionsSchema = z.object({
  dir: z.string().trim().min(1),
  workers: z.coerce.number().int().min(1).max(16),
  sandboxSpeed: z.coerce.number().min(1).max(10_000),
});

function readOptions(): z.infer<typeof optionsSchema> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string', default: '.opflow/aws-local' },
      workers: { type: 'string', default: '2' },
      'sandbox-speed': { type: 'string', default: '30' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'npm run aws-local [-- --dir .opflow/aws-local] [--workers 2] [--sandbox-speed 30]\n' +
        'Runs the aws backend on emulators and prints the environment for opflow --backend aws.\n',
    );
    process.exit(0);
  }
  const parsed = optionsSchema.safeParse({
    dir: values.dir,
    workers: values.workers,
    sandboxSpeed: values['sandbox-speed'],
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

    const env = await provision(
      emulators,
      apiKey ?? SANDBOX_API_KEY,
      sandbox?.url ?? process.env.OPFLOW_BASE_URL,
    );
    // The bundled functions read their settings from the environment at load, as in Lambda.
    Object.assign(process.env, env, {
      POWERTOOLS_SERVICE_NAME: 'opflow',
      POWERTOOLS_METRICS_NAMESPACE: 'opflow',
      AWS_LAMBDA_FUNCTION_NAME: 'opflow-local',
    });
    keepFunctionOutputIn(logFile);

    const workers: WorkerHandler[] = [];
    for (let i = 0; i < options.workers; i++)
      workers.push((await load<{ handler: WorkerHandler }>(bundles, 'worker')).handler);
    const sweeper = await load<{ handler: Handler<unknown, { requeued: number; expired: number }> }>(
      bundles,
      'sweeper',
    );
    const callbacks = (await load<{ handler: WorkerHandler }>(bundles, 'callbacks')).handler;
    const api = await load<{ handler: Parameters<typeof startApiGateway>[0] }>(bundles, 'api');
    const gateway: ApiGateway = await startApiGateway(api.handler);
    stops.push(() => gateway.close());

    /** An event source on `queueUrl` with `instances` pollers, each taking one batch at a time, as Lambda's do. */
    const pollers = (label: string, queueUrl: string, timeoutMs: number, handlers: WorkerHandler[]) => {
      const source = new SqsEventSource({
        sqs: emulators.clients.sqs,
        queueUrl,
        queueArn: `arn:aws:sqs:${emulators.region}:000000000000:${queueUrl.split('/').pop()}`,
        batchSize: 10,
        waitTimeSeconds: 1,
        functionTimeoutMs: timeoutMs,
      });
      return handlers.map(async (handler) => {
        while (!stopping) {
          try {
            await source.poll(handler);
          } catch (error) {
            if (!stopping) say(`${label}: ${errorMessage(error)}`);
            await new Promise((resolve) => setTimeout(resolve, 1_000));
          }
        }
      });
    };
    const loops = [
      ...pollers('event source', env.OPFLOW_QUEUE_URL, WORKER_TIMEOUT_MS, workers),
      // The callback sender: 2 instances at most (the stack's maximum concurrency).
      ...pollers('callback event source', env.OPFLOW_CALLBACK_QUEUE_URL, CALLBACKS_TIMEOUT_MS, [
        callbacks,
        callbacks,
      ]),
    ];
    const sweep = setInterval(() => {
      sweeper.handler(scheduledEvent(), lambdaContext('opflow-sweeper', 60_000)).catch((error: unknown) => {
        say(`sweeper: ${errorMessage(error)}`);
      });
    }, SWEEP_EVERY_MS);
    stops.push(async () => {
      clearInterval(sweep);
      await Promise.allSettled(loops);
    });

    const envFile = path.join(dir, 'aws-local.env');
    const lines = Object.entries({ ...env, OPFLOW_API_URL: gateway.url }).map(
      ([name, value]) => `${name}=${value}`,
    );
    writeFileSync(envFile, `${lines.join('\n')}\n`, { mode: 0o600 });
    process.stdout.write(
      `# opflow aws backend on this machine (emulators; ${sandbox ? `built-in sandbox at ${sandbox.url}` : 'the Open Platform with your OPFLOW_API_KEY'})\n` +
        `# In another shell:  set -a; . ${envFileShown(envFile)}; set +a\n` +
        `#                    npx opflow --backend aws run novelty-check examples/disclosures\n` +
        `# The job API (the api function): ${gateway.url}/jobs   Function logs: ${logFile}\n` +
        lines.map((line) => `export ${line}`).join('\n') +
        '\n',
    );
    say(
      `ready: ${workers.length} step worker instance(s), the sweeper every minute, the callback sender on its queue, the api at ${gateway.url} (Ctrl-C stops)`,
    );
  } catch (error) {
    say(`failed: ${errorMessage(error)}`);
    await stop(1);
  }
}

/** Creates the table, the queue with its DLQ, the bucket and the tenant's key secret; the environment of the stack's outputs. */
async function provision(
  emulators: AwsEmulators,
  apiKey: string,
  baseUrl: string | undefined,
): Promise<Record<string, string> & { OPFLOW_QUEUE_URL: string; OPFLOW_CALLBACK_QUEUE_URL: string }> {
  const table = await emulators.createTable();
  // Visibility timeout at six times the worker's timeout, as the stack sets it; the DLQ after 5 receives.
  const queue = emulators.createQueue({
    visibilityTimeoutSeconds: (6 * WORKER_TIMEOUT_MS) / 1000,
    maxReceiveCount: 5,
  });
  // The callback queue as the stack makes it: six times the sender's timeout, the DLQ after 5 receives.
  const callbackQueue = emulators.createQueue({
    visibilityTimeoutSeconds: (6 * CALLBACKS_TIMEOUT_MS) / 1000,
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
    OPFLOW_CALLBACK_QUEUE_URL: callbackQueue.queueUrl,
    OPFLOW_CALLBACK_SECRET_PREFIX: CALLBACK_SECRET_PREFIX,
    ...(baseUrl ? { OPFLOW_BASE_URL: baseUrl } : {}),
    ...emulators.environment(),
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
