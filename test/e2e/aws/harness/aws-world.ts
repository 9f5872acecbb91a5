/**
 * One simulated deployment of opflow on AWS, on this machine: DynamoDB Local, fauxqs (SQS with a
 * DLQ, S3), the Secrets Manager emulator holding the tenant's key, the Open Platform sandbox, and
 * the functions bundled as the CDK app bundles them: the `api` behind a local HTTP gateway, the
 * `step-worker` driven by an SQS event source, the `sweeper` run every simulated minute, and the
 * `events` and `callbacks` functions on the job table's stream (each drained when a test asks).
 * With `inbox`, uploads under `inbox/` reach the bundled `ingest` function as on AWS: S3's event
 * notification (a proxy in front of fauxqs' S3) queues an asynchronous invocation, as do the
 * function's own hand-overs and the sweeper's wake-ups (a local Lambda Invoke endpoint), with
 * Lambda's retries and on-failure queue, all as the synthesized template sets them.
 *
 * Time: `Date` is faked (vitest fake timers, Date only), so the bundled functions, fauxqs' delays
 * and visibility timeouts, and the sandbox's tasks all follow one clock that `settle()` moves
 * straight to the next thing due. Hours of polling pass in seconds; nothing sleeps.
 */
import { ulid } from 'ulid';
import { vi } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import { type ApiGateway, startApiGateway } from '../../../../scripts/lambda/api-gateway';
import type { AsyncHandler, AsyncInvoker } from '../../../../scripts/lambda/async-invoke';
import { bundleFunctions, type FunctionBundles } from '../../../../scripts/lambda/bundle-functions';
import { DynamoDbStreamSource, type StreamHandler } from '../../../../scripts/lambda/dynamodb-stream-source';
import { startIngestDelivery } from '../../../../scripts/lambda/ingest-delivery';
import type { LambdaEndpoint } from '../../../../scripts/lambda/lambda-endpoint';
import { lambdaContext, scheduledEvent } from '../../../../scripts/lambda/lambda-events';
import { installInvokeStore } from '../../../../scripts/lambda/recursion';
import type { S3NotificationProxy } from '../../../../scripts/lambda/s3-notification-proxy';
import {
  SqsEventSource,
  type SqsEventSourceOptions,
  type WorkerHandler,
} from '../../../../scripts/lambda/sqs-event-source';
import { type SqsTraceProxy, startSqsTraceProxy } from '../../../../scripts/lambda/sqs-trace-proxy';
import { DynamoDbJobStore, S3ReportStore } from '../../../../shared/backends/aws';
import { isTerminal, type Job } from '../../../../shared/engine/job-record';
import { webhookPathPattern } from '../../../../shared/http/webhooks';
import { reviewPathPattern } from '../../../../shared/reviewers/confirmation-page';
import { type Sandbox, type SandboxKey, type SandboxOptions, startSandbox } from '../../../../shared/sandbox';
import { freshFetch } from '../../../support/fresh-fetch';
import { devStackRules, type StackRules, type StreamFunctionRules } from './template-rules';

/** 5 January 2026, 09:00 UTC. */
export const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
export const TENANT_KEY = 'sk-opflow-e2e-0123456789abcdef';
const SECRET_PREFIX = 'opflow/e2e/api-key/';

export interface AwsWorldOptions {
  /** Concurrent step-worker instances (default 2). */
  workers?: number;
  /** Records per SQS event (default 10). */
  batchSize?: number;
  visibilityTimeoutSeconds?: number;
  maxReceiveCount?: number;
  sandbox?: Omit<SandboxOptions, 'now' | 'keys' | 'port' | 'host'>;
  /** The sandbox's limit of the tenant's key, in calls per second (default: none). */
  keyQps?: number;
  /** How the sandbox counts `keyQps` (default: a sliding 1 s window). */
  keyLimiter?: Pick<SandboxKey, 'limiter' | 'burst'>;
  /**
   * The tenant's key, kept in Secrets Manager and accepted by the sandbox (default TENANT_KEY).
   * The sandbox's tasks belong to the key that created them: a sandbox state file written by a
   * local run holds tasks of the built-in sandbox's key (SANDBOX_API_KEY).
   */
  tenantKey?: string;
  /** Builds the worker instances instead of loading the bundle (fault injection from source). */
  workerFactory?: (world: AwsWorld, index: number) => Promise<WorkerHandler>;
  deleteAfter?: SqsEventSourceOptions['deleteAfter'];
  /** Where the shared clock starts (default T0; the real time when real processes take part). */
  startAt?: number;
  /** Changes the functions' environment before they load (e.g. OPFLOW_QPS, an endpoint in front of an emulator). */
  env?: (env: Record<string, string>) => Promise<Record<string, string>> | Record<string, string>;
  /** The service rules to enforce (default: read from the synthesized dev stack). */
  rules?: StackRules;
  /** Deliver uploads under `inbox/` to the bundled ingest function, as the template's notification does. */
  inbox?: boolean;
}

/** The ingest side of a world with `inbox`: its asynchronous invocations and their on-failure queue. */
export interface WorldInbox {
  /** The ingest function's asynchronous invocations (S3 events, its hand-overs, the sweeper's wake-ups). */
  invoker: AsyncInvoker;
  /** The on-failure queue (the ingest dead-letter queue): its name and URL. */
  deadLetterQueue: { name: string; url: string };
  /** S3 through the notification proxy: what the tests upload with. */
  proxy: S3NotificationProxy;
  lambda: LambdaEndpoint;
}

interface LogLine {
  [key: string]: unknown;
}

export class AwsWorld {
  /** What the functions printed: Powertools JSON log lines and EMF metric documents. */
  readonly lines: LogLine[] = [];
  workers: WorkerHandler[] = [];
  sweeper!: (event: unknown, context: unknown) => Promise<{ requeued: number; expired: number }>;
  source!: SqsEventSource;
  /** The job table's stream, read as the events function's event source mapping reads it. */
  stream!: DynamoDbStreamSource;
  /** The same stream, read as the callback function's mapping reads it (its second reader). */
  callbackStream!: DynamoDbStreamSource;
  store!: DynamoDbJobStore;
  reports!: S3ReportStore;
  env: Record<string, string> = {};
  queueName = '';
  queueUrl = '';
  dlqName = '';
  bucket = '';
  sweeps = 0;
  /** What the simulated services enforce, from the synthesized template. */
  rules!: StackRules;
  /** The functions' SQS endpoint: keeps each message's trace header, refuses what SQS refuses. */
  sqsProxy!: SqsTraceProxy;
  /** With `inbox`: the ingest function's delivery. */
  inbox?: WorldInbox;
  private nextSweepAt = Date.now() + 60_000;
  private savedEnv: Record<string, string | undefined> = {};
  private restoreStdout: (() => void) | undefined;

  private constructor(
    readonly emulators: AwsEmulators,
    readonly sandbox: Sandbox,
    readonly bundles: FunctionBundles,
    readonly options: AwsWorldOptions,
  ) {}

  gateway!: ApiGateway;

  static async start(options: AwsWorldOptions = {}): Promise<AwsWorld> {
    // The Lambda runtime's invoke store, before any bundle loads: its SDK reads the trace header there.
    installInvokeStore();
    vi.useFakeTimers({ toFake: ['Date'], now: options.startAt ?? T0 });
    // The emulators, the sandbox and the bundles start first: their processes (fauxqs' and DynamoDB
    // Local's start, the esbuild service) go on while the stack's rules are read, or synthesized by
    // the run's first file, which holds this thread for seconds (17 s of a 70 s start on a loaded
    // machine when it came first).
    const starts = [
      startAwsEmulators(),
      startSandbox({
        ...options.sandbox,
        now: () => Date.now(),
        keys: [
          {
            key: options.tenantKey ?? TENANT_KEY,
            ...(options.keyQps ? { qps: options.keyQps } : {}),
            ...options.keyLimiter,
          },
        ],
        streamChunkDelayMs: options.sandbox?.streamChunkDelayMs ?? 0,
      }),
      // One build for every aws e2e file while the sources stay the same: the first file's
      // process builds, the others wait for it and reuse it (scripts/lambda/build-once.ts).
      bundleFunctions({ reuse: true }),
    ] as const;
    // A start that fails while the rules are awaited is seen by allSettled below, not reported unhandled.
    for (const start of starts) start.catch(() => {});
    const started: { stop(): Promise<void> }[] = [];
    try {
      const rules = options.rules ?? (await devStackRules());
      const [emulators, sandbox, bundles] = await Promise.allSettled(starts);
      if (emulators.status === 'fulfilled') started.push(emulators.value);
      if (sandbox.status === 'fulfilled') started.push({ stop: () => sandbox.value.close() });
      if (bundles.status === 'fulfilled') started.push({ stop: () => bundles.value.remove() });
      if (emulators.status === 'rejected') throw emulators.reason;
      if (sandbox.status === 'rejected') throw sandbox.reason;
      if (bundles.status === 'rejected') throw bundles.reason;
      const world = new AwsWorld(emulators.value, sandbox.value, bundles.value, options);
      world.rules = rules;
      world.sqsProxy = await startSqsTraceProxy({
        target: emulators.value.environment()['AWS_ENDPOINT_URL_SQS']!,
        maxMessageBytes: rules.workQueueMaxMessageBytes,
      });
      started.push({ stop: () => world.sqsProxy.close() });
      await world.provision();
      return world;
    } catch (error) {
      if (started.length === 0) {
        // The rules failed before the starts were awaited: stop each once it has started.
        const [emulators, sandbox, bundles] = starts;
        await Promise.allSettled([
          emulators.then((e) => e.stop()),
          sandbox.then((s) => s.close()),
          bundles.then((b) => b.remove()),
        ]);
      }
      await Promise.allSettled(started.map((item) => item.stop()));
      vi.useRealTimers();
      throw error;
    }
  }

  private async provision(): Promise<void> {
    const { emulators } = this;
    const table = await emulators.createTable();
    const queue = emulators.createQueue({
      visibilityTimeoutSeconds: this.options.visibilityTimeoutSeconds ?? 60,
      maxReceiveCount: this.options.maxReceiveCount ?? 3,
    });
    this.queueName = queue.queueName;
    this.queueUrl = queue.queueUrl;
    this.dlqName = queue.dlqName!;
    this.bucket = emulators.createBucket();
    emulators.secretsManager!.setSecret(
      `${SECRET_PREFIX}default`,
      JSON.stringify({ apiKey: this.options.tenantKey ?? TENANT_KEY }),
    );
    this.env = {
      OPFLOW_TABLE_NAME: table,
      OPFLOW_QUEUE_URL: this.queueUrl,
      OPFLOW_BUCKET_NAME: this.bucket,
      OPFLOW_API_KEY_SECRET_PREFIX: SECRET_PREFIX,
      OPFLOW_BASE_URL: this.sandbox.url,
      OPFLOW_QPS: '20',
      ...emulators.environment(),
      AWS_ENDPOINT_URL_SQS: this.sqsProxy.url,
      POWERTOOLS_SERVICE_NAME: 'opflow',
      POWERTOOLS_METRICS_NAMESPACE: 'opflow',
      POWERTOOLS_LOG_LEVEL: 'INFO',
      AWS_LAMBDA_FUNCTION_NAME: 'opflow-e2e',
    };
    let ingestHandler: AsyncHandler | undefined;
    if (this.options.inbox) {
      this.inbox = await this.startInbox((event, context) => {
        if (!ingestHandler) throw new Error('the ingest function is not loaded yet');
        return ingestHandler(event, context);
      });
    }
    if (this.options.env) this.env = await this.options.env(this.env);
    for (const [name, value] of Object.entries(this.env)) {
      this.savedEnv[name] = process.env[name];
      process.env[name] = value;
    }
    this.captureStdout();

    this.store = new DynamoDbJobStore({ client: emulators.clients.documents, tableName: table });
    this.reports = new S3ReportStore({ client: emulators.clients.s3, bucket: this.bucket });
    const workerCount = this.options.workers ?? 2;
    for (let index = 0; index < workerCount; index++) {
      this.workers.push(
        this.options.workerFactory
          ? await this.options.workerFactory(this, index)
          : (await this.bundles.load<{ handler: WorkerHandler }>('worker')).handler,
      );
    }
    const api = await this.bundles.load<{ handler: Parameters<typeof startApiGateway>[0] }>('api');
    type ApiHandler = Parameters<typeof startApiGateway>[0];
    // The stack integrates the webhook route and the reviewers' confirmation page with their own
    // function: built on the first request, so a world that receives none does not pay for its bundle.
    let webhooks: Promise<{ handler: ApiHandler }> | undefined;
    const webhookHandler: ApiHandler = async (event, context) => {
      webhooks ??= this.bundles.load<{ handler: ApiHandler }>('webhooks');
      return (await webhooks).handler(event, context);
    };
    this.gateway = await startApiGateway(api.handler, {
      functionTimeoutMs: this.rules.api.timeoutMs,
      integrationTimeoutMs: this.rules.api.integrationTimeoutMs,
      otherFunctions: [
        { path: webhookPathPattern, functionName: 'opflow-webhooks', handler: webhookHandler },
        { path: reviewPathPattern, functionName: 'opflow-webhooks', handler: webhookHandler },
      ],
    });
    this.sweeper = (await this.bundles.load<{ handler: AwsWorld['sweeper'] }>('sweeper')).handler;
    if (this.inbox) ingestHandler = (await this.bundles.load<{ handler: AsyncHandler }>('ingest')).handler;
    // The job table's stream, once per reader, each with its mapping's batch size and filters.
    const streamOf = (rules: StreamFunctionRules) =>
      new DynamoDbStreamSource({
        endpoint: emulators.dynamoDb!.endpoint,
        region: emulators.region,
        credentials: { accessKeyId: 'test' },
        tableName: table,
        batchSize: rules.batchSize,
        filters: rules.filters,
        functionName: rules.functionName,
        functionTimeoutMs: rules.timeoutMs,
      });
    this.stream = streamOf(this.rules.events);
    await this.stream.start();
    this.callbackStream = streamOf(this.rules.callbacks);
    await this.callbackStream.start();
    this.source = new SqsEventSource({
      sqs: emulators.clients.sqs,
      queueUrl: this.queueUrl,
      queueArn: `arn:aws:sqs:us-east-1:000000000000:${this.queueName}`,
      batchSize: this.options.batchSize ?? 10,
      functionTimeoutMs: this.rules.worker.timeoutMs,
      deleteAfter: this.options.deleteAfter,
      recursion: {
        functionName: this.rules.worker.functionName,
        recursiveLoop: this.rules.worker.recursiveLoop,
        traceHeaders: this.sqsProxy.traceHeaders,
      },
    });
  }

  /**
   * The ingest function's delivery as the template sets it: the on-failure queue, its asynchronous
   * invocations, the Lambda Invoke endpoint that takes its own and the sweeper's, and S3's
   * notification for `inbox/` (the functions' and the tests' S3 endpoint is the proxy).
   */
  private async startInbox(handler: AsyncHandler): Promise<WorldInbox> {
    const delivery = await startIngestDelivery(this.emulators, this.bucket, this.rules.ingest, handler);
    Object.assign(this.env, delivery.env);
    return delivery;
  }

  /** Keep the functions' JSON output (logs, EMF metrics) for assertions, out of the test report. */
  private captureStdout(): void {
    const restorers = [process.stdout, process.stderr].map((stream) => {
      const original = stream.write.bind(stream);
      const capture = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
        const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        let kept = false;
        for (const line of text.split('\n')) {
          if (!line.startsWith('{')) continue;
          try {
            this.lines.push(JSON.parse(line) as LogLine);
            kept = true;
          } catch {
            // Not one of ours.
          }
        }
        return kept ? true : original(chunk as string, ...(rest as []));
      };
      stream.write = capture as typeof stream.write;
      return () => {
        stream.write = original;
      };
    });
    this.restoreStdout = () => {
      for (const restore of restorers) restore();
    };
  }

  now(): number {
    return Date.now();
  }

  /** Moves the shared clock forward (never back). */
  advanceTo(at: number): void {
    if (at > Date.now()) vi.setSystemTime(at);
  }

  /** A request to the job API through the gateway (on a connection of its own: test/support/fresh-fetch.ts). */
  async api(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<{
    status: number;
    body: Record<string, unknown> & { error?: { message: string; code: string } };
  }> {
    const response = await freshFetch(`${this.gateway.url}${path}`, {
      method,
      headers: {
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    return { status: response.status, body: (await response.json()) as never };
  }

  /** Submits a job through the API and returns its id. */
  async submit(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
    const answer = await this.api('POST', '/jobs', { body, headers });
    if (answer.status !== 201 && answer.status !== 200) {
      throw new Error(`POST /jobs answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
    return (answer.body.job as { id: string }).id;
  }

  queueState() {
    const state = this.emulators.fauxqs!.inspectQueue(this.queueName)!;
    const now = Date.now();
    const due = (at: number | undefined) => at === undefined || at <= now;
    return {
      ready:
        state.messages.ready.length +
        state.messages.delayed.filter((message) => due(message.delayUntil)).length +
        state.messages.inflight.filter((entry) => entry.visibilityDeadline <= now).length,
      nextAt: Math.min(
        ...state.messages.delayed.map((message) => message.delayUntil ?? now),
        ...state.messages.inflight.map((entry) => entry.visibilityDeadline),
        Number.POSITIVE_INFINITY,
      ),
      total: state.messages.ready.length + state.messages.delayed.length + state.messages.inflight.length,
    };
  }

  dlqBodies(): string[] {
    const state = this.emulators.fauxqs!.inspectQueue(this.dlqName)!;
    return [
      ...state.messages.ready,
      ...state.messages.delayed,
      ...state.messages.inflight.map((entry) => entry.message),
    ].map((message) => message.body);
  }

  private eventsHandler: Promise<{ handler: StreamHandler }> | undefined;

  /**
   * Hands what the job table's stream holds to the bundled events function (loaded on first use),
   * as Lambda's stream event source would; returns the records delivered.
   */
  async deliverStream(): Promise<number> {
    this.eventsHandler ??= this.bundles.load<{ handler: StreamHandler }>('events');
    const { handler } = await this.eventsHandler;
    return this.stream.drain(handler);
  }

  private callbacksHandler: Promise<{ handler: StreamHandler }> | undefined;

  /**
   * Hands the due callback outbox entries the job table's stream holds to the bundled callback
   * function (loaded on first use), as its stream event source would; returns the records delivered.
   */
  async deliverCallbacks(): Promise<number> {
    this.callbacksHandler ??= this.bundles.load<{ handler: StreamHandler }>('callbacks');
    const { handler } = await this.callbacksHandler;
    return this.callbackStream.drain(handler);
  }

  /** Runs the sweeper function once, as its schedule would. */
  async sweep(): Promise<{ requeued: number; expired: number }> {
    this.sweeps += 1;
    return this.sweeper(scheduledEvent(), lambdaContext('opflow-sweeper', 60_000));
  }

  /** One round of delivery: every ready message to the worker instances (or a clock jump when none is). */
  async deliverOnce(): Promise<void> {
    const queue = this.queueState();
    if (queue.ready === 0) {
      if (Number.isFinite(queue.nextAt)) this.advanceTo(queue.nextAt);
      return;
    }
    const batch = this.options.batchSize ?? 10;
    const instances = this.workers.slice(
      0,
      Math.max(1, Math.min(this.workers.length, Math.ceil(queue.ready / batch))),
    );
    await Promise.all(instances.map((worker) => this.source.poll(worker)));
  }

  /**
   * Delivers work until every job in `ids` is settled (finished, or waiting for a person) and, when
   * `drain` is set, the queue is empty too. When nothing is visible, the clock jumps to the next
   * delayed message, visibility timeout or sweeper run (every minute, as scheduled).
   */
  async settle(
    ids: readonly string[],
    options: { maxRounds?: number; drain?: boolean } = {},
  ): Promise<Job[]> {
    const maxRounds = options.maxRounds ?? 2_000;
    for (let round = 0; round < maxRounds; round++) {
      const jobs = await Promise.all(ids.map((id) => this.store.get(id)));
      const settled = jobs.every((job) => job && (isTerminal(job.status) || job.status === 'AWAITING_INPUT'));
      const queue = this.queueState();
      if (settled && (!options.drain || queue.total === 0)) return jobs as Job[];
      if (queue.ready > 0) {
        const batch = this.options.batchSize ?? 10;
        const instances = this.workers.slice(
          0,
          Math.max(1, Math.min(this.workers.length, Math.ceil(queue.ready / batch))),
        );
        await Promise.all(instances.map((worker) => this.source.poll(worker)));
        continue;
      }
      const next = Math.min(queue.nextAt, settled ? Number.POSITIVE_INFINITY : this.nextSweepAt);
      if (!Number.isFinite(next)) return jobs as Job[];
      this.advanceTo(next);
      if (!settled && Date.now() >= this.nextSweepAt) {
        await this.sweep();
        this.nextSweepAt = Date.now() + 60_000;
      }
    }
    const jobs = await Promise.all(ids.map((id) => this.store.get(id)));
    throw new Error(
      `jobs did not settle in ${maxRounds} rounds: ${jobs.map((job) => `${job?.id} ${job?.status} at ${job?.step}`).join(', ')}`,
    );
  }

  /** EMF metric values by name, summed over everything the functions published. */
  metricTotals(): Record<string, number> {
    const totals: Record<string, number> = {};
    for (const line of this.lines) {
      const aws = line._aws as
        | { CloudWatchMetrics?: { Namespace: string; Metrics: { Name: string }[] }[] }
        | undefined;
      for (const directive of aws?.CloudWatchMetrics ?? []) {
        for (const metric of directive.Metrics) {
          const value = line[metric.Name];
          const values = Array.isArray(value) ? value : [value];
          totals[metric.Name] =
            (totals[metric.Name] ?? 0) + values.reduce((sum: number, v) => sum + Number(v), 0);
        }
      }
    }
    return totals;
  }

  /** Log lines (not metrics) the functions wrote. */
  logLines(): LogLine[] {
    return this.lines.filter((line) => typeof line.level === 'string');
  }

  /** Sends a work message directly (a duplicate or a stale one, as SQS might deliver). */
  async enqueueRaw(body: string): Promise<void> {
    const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
    await this.emulators.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: body }),
    );
  }

  /**
   * Deletes every queued message of `jobId`, as if the worker had died between its commit and its
   * send; returns how many there were. Other messages stay where they are.
   */
  async loseMessagesOf(jobId: string): Promise<number> {
    const { DeleteMessageCommand, ReceiveMessageCommand } = await import('@aws-sdk/client-sqs');
    const sqs = this.emulators.clients.sqs;
    const queued = () => {
      const state = this.emulators.fauxqs!.inspectQueue(this.queueName)!;
      return [
        ...state.messages.ready,
        ...state.messages.delayed,
        ...state.messages.inflight.map((entry) => entry.message),
      ].filter((message) => message.body.includes(`"jobId":"${jobId}"`)).length;
    };
    let lost = 0;
    for (let tries = 0; tries < 100 && queued() > 0; tries++) {
      // A job's first message may be delayed to the time of the token it holds: it cannot be
      // received before then, so the (simulated) clock moves to it, as it would while it waits.
      const state = this.emulators.fauxqs!.inspectQueue(this.queueName)!;
      const delayedUntil = state.messages.delayed
        .filter((message) => message.body.includes(`"jobId":"${jobId}"`))
        .map((message) => message.delayUntil ?? 0);
      if (delayedUntil.length > 0) this.advanceTo(Math.min(...delayedUntil));
      // Seen but not hidden (visibility 0): what is not ours is left for the workers.
      const answer = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: this.queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
      );
      for (const message of answer.Messages ?? []) {
        if (!message.Body?.includes(`"jobId":"${jobId}"`)) continue;
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: this.queueUrl, ReceiptHandle: message.ReceiptHandle }),
        );
        lost += 1;
      }
    }
    if (queued() > 0) throw new Error(`could not take the messages of job ${jobId} off the queue`);
    return lost;
  }

  async stop(): Promise<void> {
    this.restoreStdout?.();
    for (const [name, value] of Object.entries(this.savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await Promise.allSettled([
      this.gateway?.close(),
      this.sqsProxy?.close(),
      this.inbox?.proxy.close(),
      this.inbox?.lambda.close(),
      this.sandbox.close(),
      this.emulators.stop(),
      this.bundles.remove(),
    ]);
    vi.useRealTimers();
  }
}

export const newIdempotencyKey = () => `e2e-${ulid()}`;
