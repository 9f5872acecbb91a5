/**
 * How the other functions invoke the ingest function (asynchronously, `{kind: "continue"}`): the
 * sweeper's minute pass when an entry of the ingest schedule is due, the step worker when a job of
 * a batch ends, and the ingest function itself when it hands its work on. The Lambda client is a
 * chunk loaded on the first invocation, and the ingest schedule one loaded on its first use (the
 * step worker's first end of a batch's job): a worker whose jobs belong to no batch loads neither.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsClientConfig } from '../../backends/aws/clients';
import type { BatchWake, DynamoDbIngestSchedule } from '../../backends/aws/dynamodb-ingest-schedule';
import { ingestVariables } from '../../backends/aws/ingest-variables';

type Env = Readonly<Record<string, string | undefined>>;

/** Asynchronous invocations of functions by name, the Lambda client loaded on the first. */
export function lazyInvoker(
  clientConfig: AwsClientConfig,
): (functionName: string, payload: unknown) => Promise<void> {
  let loaded: Promise<(functionName: string, payload: unknown) => Promise<void>> | undefined;
  return async (functionName, payload) => {
    loaded ??= import('../../backends/aws/lambda-invoke').then(({ createLambdaClient, invokeAsync }) => {
      const lambda = createLambdaClient(clientConfig);
      return (name: string, event: unknown) => invokeAsync(lambda, name, event);
    });
    loaded.catch(() => {
      loaded = undefined;
    });
    return (await loaded)(functionName, payload);
  };
}

/** The ingest schedule, its module loaded on first use (a chunk of its own). */
function lazySchedule(
  documents: DynamoDBDocumentClient,
  tableName: string,
): () => Promise<DynamoDbIngestSchedule> {
  let loaded: Promise<DynamoDbIngestSchedule> | undefined;
  return () => {
    loaded ??= import('../../backends/aws/dynamodb-ingest-schedule').then(
      (module) => new module.DynamoDbIngestSchedule(documents, tableName),
    );
    loaded.catch(() => {
      loaded = undefined;
    });
    return loaded;
  };
}

/** The ingest function's name from the environment (the stack sets it for the functions that invoke it). */
export function ingestFunctionName(env: Env = process.env): string | undefined {
  return env[ingestVariables.functionName]?.trim() || undefined;
}

/** The event that has the ingest function take whatever is due (the first of its chain). */
const continuation = { kind: 'continue', hop: 0 } as const;

/**
 * The sweeper's ingest pass: one Query of the schedule's partition (a handful of items); when an
 * entry is due, one invocation of the ingest function. Whether it invoked.
 */
export function sweeperIngestWake(
  documents: DynamoDBDocumentClient,
  tableName: string,
  clientConfig: AwsClientConfig,
  functionName: string,
): (now: number) => Promise<boolean> {
  const schedule = lazySchedule(documents, tableName);
  const invoke = lazyInvoker(clientConfig);
  return async (now) => {
    if ((await (await schedule()).due(now)).length === 0) return false;
    await invoke(functionName, continuation);
    return true;
  };
}

/**
 * A job of a batch ended: its batch's entry is woken (one conditional write), and when no driver
 * holds it and no wake-up is on its way, the ingest function is invoked, so the batch's next items
 * go out and its outputs are written within seconds of the end instead of at the sweeper's next
 * minute. A batch no longer in the schedule (settled: a job of it was retried after it finished) is
 * put back by the invocation (`batchId`), driven once and its outputs rewritten. What the wake did.
 */
export function batchEndWake(
  documents: DynamoDBDocumentClient,
  tableName: string,
  clientConfig: AwsClientConfig,
  functionName: string,
): (batchId: string, now: number) => Promise<BatchWake> {
  const schedule = lazySchedule(documents, tableName);
  const invoke = lazyInvoker(clientConfig);
  return async (batchId, now) => {
    const woke = await (await schedule()).wake(batchId, now);
    // `none`: settled and out of the schedule, a job of it ran again (a retry) and ended. The
    // function puts it back, drives it once: counts the job, rewrites its outputs from its jobs.
    if (woke !== 'noted')
      await invoke(functionName, woke === 'none' ? { ...continuation, batchId } : continuation);
    return woke;
  };
}
