/**
 * Drives a step worker the way Lambda's SQS event source does: long-poll ReceiveMessage on the work
 * queue (batches of up to ten), build the SQS event, invoke the handler, delete only the records
 * it did not report as failed (none when it threw: a crashed invocation), and leave everything
 * else to reappear after the visibility timeout, or move to the DLQ after `maxReceiveCount`.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaContext, sqsRecord } from './lambda-events';
import {
  installInvokeStore,
  invocationTraceHeader,
  lineageCount,
  lineageId,
  RECURSION_LIMIT,
  type RecursiveLoop,
  runWithTraceHeader,
} from './recursion';

export type WorkerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface Invocation {
  received: number;
  failed: number;
  deleted: number;
  /** The handler threw (or was made to crash): nothing of the batch was deleted. */
  crashed: boolean;
  bodies: string[];
  /** When each step of the invocation happened (epoch ms), for a timeline of the event source's delays. */
  timing: InvocationTiming;
}

/** Epoch milliseconds of one invocation's steps, and each record's SentTimestamp. */
export interface InvocationTiming {
  messageIds: string[];
  sentAt: number[];
  /** The receive that got the batch answered. */
  receivedAt: number;
  handlerStartedAt: number;
  handlerEndedAt: number;
  /** The batch's deletes were answered (equal to handlerEndedAt when nothing was deleted). */
  deletedAt: number;
}

export interface SqsEventSourceOptions {
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  /** Records per event (default 10, the SQS maximum per receive). */
  batchSize?: number;
  /** The function's name in the context each invocation gets (default `opflow-step-worker`). */
  functionName?: string;
  /** Seconds a receive waits for messages (default 1). */
  waitTimeSeconds?: number;
  /** Real time each invocation gets before it is stopped as timed out (default 60 s; the template's `Timeout`). */
  functionTimeoutMs?: number;
  /**
   * Asked after each invocation; false means the deletes are lost (the instance died after its
   * handler returned, before the event source deleted anything).
   */
  deleteAfter?: (invocation: Omit<Invocation, 'deleted' | 'timing'>) => boolean;
  /** Told of each invocation once its deletes are answered (aws-local's `--timeline`). */
  onInvocation?: (invocation: Invocation) => void;
  /**
   * Lambda's recursive loop detection for this function (recursion.ts): its name, its
   * `RecursiveLoop` as the template sets it, and the trace header of each message by id (the SQS
   * proxy's record). Absent: no trace headers, no detection.
   */
  recursion?: {
    functionName: string;
    recursiveLoop: RecursiveLoop;
    traceHeaders: ReadonlyMap<string, string>;
  };
}

/** A record Lambda refused to invoke the function with: its chain had invoked it RECURSION_LIMIT times. */
export interface StoppedRecord {
  messageId: string;
  body: string;
  hops: number;
}

export class SqsEventSource {
  readonly invocations: Invocation[] = [];
  /** Records stopped by recursive loop detection (on AWS: a notification, and the message retried into the DLQ). */
  readonly stopped: StoppedRecord[] = [];
  /** The longest chain that invoked the function: the highest Lineage count of an invocation. */
  maxHops = 0;
  private readonly options: Required<
    Omit<SqsEventSourceOptions, 'deleteAfter' | 'recursion' | 'onInvocation'>
  > &
    Pick<SqsEventSourceOptions, 'deleteAfter' | 'recursion' | 'onInvocation'>;
  private readonly invokeStore = installInvokeStore();

  constructor(options: SqsEventSourceOptions) {
    this.options = {
      batchSize: 10,
      waitTimeSeconds: 1,
      functionTimeoutMs: 60_000,
      functionName: 'opflow-step-worker',
      ...options,
    };
  }

  /** One receive and, when it got messages, one invocation of `handler` (an instance of the function). */
  async poll(handler: WorkerHandler): Promise<Invocation | undefined> {
    const { sqs, queueUrl, queueArn } = this.options;
    const answer = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: this.options.batchSize,
        WaitTimeSeconds: this.options.waitTimeSeconds,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const receivedAt = Date.now();
    const received = answer.Messages ?? [];
    if (received.length === 0) return undefined;
    const recursion = this.options.recursion;
    const id = recursion ? lineageId(recursion.functionName) : '';
    const headerOf = (messageId: string | undefined) =>
      recursion?.traceHeaders.get(messageId ?? '') ?? undefined;
    // Lambda stops a chain that has invoked the function RECURSION_LIMIT times: the record is not
    // delivered (nor deleted), so it comes back after the visibility timeout and ends in the DLQ.
    const messages = received.filter((message) => {
      const hops = lineageCount(headerOf(message.MessageId), id);
      if (!recursion || recursion.recursiveLoop === 'Allow' || hops < RECURSION_LIMIT) return true;
      this.stopped.push({ messageId: message.MessageId ?? '', body: message.Body ?? '', hops });
      return false;
    });
    if (messages.length === 0) return undefined;
    const headers = messages.map((message) => headerOf(message.MessageId));
    const traceHeader = invocationTraceHeader(headers, id);
    if (recursion) this.maxHops = Math.max(this.maxHops, lineageCount(traceHeader, id));
    const event: SQSEvent = {
      Records: messages.map((message, index) => {
        const record = sqsRecord(
          {
            messageId: message.MessageId ?? '',
            receiptHandle: message.ReceiptHandle ?? '',
            body: message.Body ?? '',
            receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
            sentAt: Number(message.Attributes?.SentTimestamp ?? Date.now()),
          },
          queueArn,
        );
        const header = headers[index];
        if (header) record.attributes.AWSTraceHeader = header;
        return record;
      }),
    };
    let failedIds: Set<string> | undefined;
    let timer: NodeJS.Timeout | undefined;
    const handlerStartedAt = Date.now();
    try {
      const invoke = () =>
        handler(event, lambdaContext(this.options.functionName, this.options.functionTimeoutMs));
      // Lambda stops the invocation at the function's timeout ("Task timed out"): the batch is
      // neither answered nor deleted, and comes back after the visibility timeout.
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('Task timed out')), this.options.functionTimeoutMs);
      });
      const response = await Promise.race([
        recursion ? runWithTraceHeader(this.invokeStore, traceHeader, invoke) : invoke(),
        timedOut,
      ]);
      failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
    } catch {
      failedIds = undefined;
    } finally {
      clearTimeout(timer);
    }
    const handlerEndedAt = Date.now();
    const partial = {
      received: messages.length,
      failed: failedIds ? failedIds.size : messages.length,
      crashed: failedIds === undefined,
      bodies: event.Records.map((record) => record.body),
    };
    const keep = failedIds === undefined || this.options.deleteAfter?.(partial) === false;
    const done = keep ? [] : event.Records.filter((record) => !failedIds?.has(record.messageId));
    if (done.length > 0) {
      const deleted = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: done.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
        }),
      );
      if (deleted.Failed?.length)
        throw new Error(`the event source could not delete ${deleted.Failed.length} records`);
    }
    const timing: InvocationTiming = {
      messageIds: event.Records.map((record) => record.messageId),
      sentAt: event.Records.map((record) => Number(record.attributes.SentTimestamp)),
      receivedAt,
      handlerStartedAt,
      handlerEndedAt,
      deletedAt: done.length > 0 ? Date.now() : handlerEndedAt,
    };
    const invocation = { ...partial, deleted: done.length, timing };
    this.invocations.push(invocation);
    this.options.onInvocation?.(invocation);
    return invocation;
  }
}
