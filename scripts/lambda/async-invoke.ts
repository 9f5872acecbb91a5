/**
 * Lambda's asynchronous invocation of one function, as the local Lambda host models it: each event
 * (an S3 notification, an `Invoke` with `InvocationType: Event`) waits in the function's own queue
 * and is handed to the function; a failed invocation is retried as the function's asynchronous
 * settings say (`MaximumRetryAttempts`, Lambda's delays of 1 then 2 minutes), an event that fails
 * them all or outlives `MaximumEventAgeInSeconds` is sent to the on-failure destination (an SQS
 * queue) as Lambda's destination record. Recursive loop detection as for the SQS event source
 * (recursion.ts): each event keeps the trace header it was sent with, and a chain that has invoked
 * the function 16 times is stopped unless its `RecursiveLoop` is `Allow`.
 *
 * It runs on whatever clock `Date` is: `runDue()` hands over what is due now (the e2e harness moves
 * a fake clock to `nextAt()`), and `start()` runs it in real time (aws-local).
 */
import { randomUUID } from 'node:crypto';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { lambdaContext } from './lambda-events';
import {
  installInvokeStore,
  invocationTraceHeader,
  lineageCount,
  lineageId,
  RECURSION_LIMIT,
  type RecursiveLoop,
  runWithTraceHeader,
} from './recursion';

export type AsyncHandler = (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<unknown>;

/** Lambda's delays before the first and the second retry of a failed asynchronous invocation. */
export const ASYNC_RETRY_DELAYS_MS = [60_000, 120_000] as const;

export interface AsyncInvokeOptions {
  functionName: string;
  timeoutMs: number;
  recursiveLoop: RecursiveLoop;
  /** Retries of a failed invocation (the template's MaximumRetryAttempts; Lambda's default 2). */
  retryAttempts: number;
  /** How long an event may wait (the template's MaximumEventAgeInSeconds; Lambda's default 6 hours). */
  maxEventAgeSeconds: number;
  /** Where an event that failed every attempt goes. */
  onFailure?: { sqs: SQSClient; queueUrl: string } | undefined;
}

interface PendingEvent {
  id: string;
  event: unknown;
  traceHeader: string | undefined;
  receivedAt: number;
  dueAt: number;
  attempts: number;
}

export class AsyncInvoker {
  private readonly pending: PendingEvent[] = [];
  private readonly invokeStore = installInvokeStore();
  private running = 0;
  /** Invocations handed to the function. */
  invocations = 0;
  /** Invocations that threw (each retried or sent to the on-failure destination). */
  failures = 0;
  /** Events sent to the on-failure destination, with why. */
  readonly dead: { event: unknown; condition: string; error?: string | undefined }[] = [];
  /** Events not delivered because their chain reached the recursion limit. */
  readonly stopped: { event: unknown; hops: number }[] = [];
  /** The longest chain seen (invocations of this function by one chain). */
  maxHops = 0;

  constructor(
    private readonly handler: AsyncHandler,
    readonly options: AsyncInvokeOptions,
  ) {}

  /** Queues an event, sent with `traceHeader` (the sender's, when an invocation sends it). */
  enqueue(event: unknown, traceHeader?: string): void {
    const now = Date.now();
    this.pending.push({ id: randomUUID(), event, traceHeader, receivedAt: now, dueAt: now, attempts: 0 });
  }

  /** Events waiting (due or not) and invocations under way. */
  get waiting(): number {
    return this.pending.length + this.running;
  }

  /** When the next waiting event is due (Infinity when none waits). */
  nextAt(): number {
    return Math.min(...this.pending.map((entry) => entry.dueAt), Number.POSITIVE_INFINITY);
  }

  /** Hands every event due now to the function, at once (concurrent deliveries, as Lambda's); how many. */
  async runDue(): Promise<number> {
    const now = Date.now();
    const due = this.pending.filter((entry) => entry.dueAt <= now);
    for (const entry of due) this.pending.splice(this.pending.indexOf(entry), 1);
    await Promise.all(due.map((entry) => this.deliver(entry)));
    return due.length;
  }

  private async deliver(entry: PendingEvent): Promise<void> {
    const { options } = this;
    if (Date.now() - entry.receivedAt > options.maxEventAgeSeconds * 1000)
      return this.fail(entry, 'EventAgeExceeded', undefined);
    const id = lineageId(options.functionName);
    const hops = lineageCount(entry.traceHeader, id);
    if (options.recursiveLoop !== 'Allow' && hops >= RECURSION_LIMIT) {
      this.stopped.push({ event: entry.event, hops });
      return this.fail(entry, 'RecursiveInvocationDetected', undefined);
    }
    const traceHeader = invocationTraceHeader([entry.traceHeader], id);
    this.maxHops = Math.max(this.maxHops, lineageCount(traceHeader, id));
    entry.attempts += 1;
    this.invocations += 1;
    this.running += 1;
    try {
      await runWithTraceHeader(this.invokeStore, traceHeader, () =>
        this.handler(structuredClone(entry.event), lambdaContext(options.functionName, options.timeoutMs)),
      );
    } catch (error) {
      this.failures += 1;
      const retry = ASYNC_RETRY_DELAYS_MS[entry.attempts - 1];
      if (entry.attempts <= options.retryAttempts && retry !== undefined) {
        this.pending.push({ ...entry, dueAt: Date.now() + retry });
        return;
      }
      return this.fail(entry, 'RetriesExhausted', String((error as Error)?.message ?? error));
    } finally {
      this.running -= 1;
    }
  }

  /** Lambda's on-failure destination record, sent to the destination queue. */
  private async fail(entry: PendingEvent, condition: string, error: string | undefined): Promise<void> {
    this.dead.push({ event: entry.event, condition, error });
    const destination = this.options.onFailure;
    if (!destination) return;
    const record = {
      version: '1.0',
      timestamp: new Date().toISOString(),
      requestContext: {
        requestId: entry.id,
        functionArn: `arn:aws:lambda:us-east-1:000000000000:function:${this.options.functionName}:$LATEST`,
        condition,
        approximateInvokeCount: entry.attempts,
      },
      requestPayload: entry.event,
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      responsePayload: error === undefined ? null : { errorMessage: error },
    };
    await destination.sqs.send(
      new SendMessageCommand({ QueueUrl: destination.queueUrl, MessageBody: JSON.stringify(record) }),
    );
  }

  /** Runs due events in real time until `stop()` (aws-local). */
  start(onError: (error: unknown) => void, everyMs = 100): { stop(): Promise<void> } {
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        try {
          // Not awaited one by one: a long invocation does not hold the others back.
          void this.runDue().catch(onError);
        } catch (error) {
          onError(error);
        }
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await loop;
      },
    };
  }
}
