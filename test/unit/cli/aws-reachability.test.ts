/**
 * What `opflow --backend aws` says of a stack not all there (shared/cli/aws-reachability.ts): the
 * SDK's errors of a missing table, queue or bucket named with their variable and what to run, and
 * the watchdog that tells a work queue nobody reads from a busy one.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { missingAwsResource, watchForStepWorker } from '../../../shared/cli/aws-reachability';
import { CliError } from '../../../shared/cli/exit-codes';
import type { Job } from '../../../shared/engine/job-record';

const deployed = {
  OPFLOW_TABLE_NAME: 'opflow-prod-jobs',
  OPFLOW_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/work',
  OPFLOW_BUCKET_NAME: 'reports',
  AWS_REGION: 'eu-west-1',
};
const local = { ...deployed, AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' };
const sdkError = (name: string, message: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { name, ...extra });

describe('missingAwsResource', () => {
  it('names the table, the queue and the bucket, where they were looked for and what to run', () => {
    expect(
      missingAwsResource(sdkError('ResourceNotFoundException', 'Requested resource not found'), deployed),
    ).toBe(
      'the job table opflow-prod-jobs (OPFLOW_TABLE_NAME) does not exist in eu-west-1 (Requested resource not found): ' +
        "deploy the stack there (`npx cdk deploy`), or point the variables (or OPFLOW_STACK_OUTPUTS) at a deployed stack's outputs; `opflow --backend aws doctor` checks them all",
    );
    expect(
      missingAwsResource(
        sdkError('QueueDoesNotExist', 'The specified queue does not exist.', {
          Code: 'AWS.SimpleQueueService.NonExistentQueue',
        }),
        local,
      ),
    ).toMatch(
      /^the work queue https:\/\/sqs\.eu-west-1\.amazonaws\.com\/1\/work \(OPFLOW_QUEUE_URL\), or its dead-letter queue, does not exist at http:\/\/127\.0\.0\.1:4566: `npm run aws-local`/,
    );
    expect(
      missingAwsResource(sdkError('NoSuchBucket', 'The specified bucket does not exist'), local),
    ).toMatch(
      /^the report bucket reports \(OPFLOW_BUCKET_NAME\) does not exist at http:\/\/127\.0\.0\.1:4566:/,
    );
  });

  it('finds the SDK error as a cause, and leaves other errors (a missing secret among them) alone', () => {
    const wrapped = new Error('could not list', { cause: sdkError('NoSuchBucket', 'gone') });
    expect(missingAwsResource(wrapped, deployed)).toMatch(/^the report bucket reports/);
    expect(
      missingAwsResource(
        sdkError('ResourceNotFoundException', "Secrets Manager can't find the specified secret."),
        deployed,
      ),
    ).toBeUndefined();
    expect(missingAwsResource(new Error('throttled'), deployed)).toBeUndefined();
  });
});

describe('watchForStepWorker', () => {
  beforeEach(() => vi.useFakeTimers({ now: Date.UTC(2026, 10, 27, 12) }));
  afterEach(() => vi.useRealTimers());
  const jobs = [{ id: '01M8FG72JB9G0E23M5CFKHCMFY' } as Job];

  /** Runs the watchdog over `seconds` of readings from `counts`; what it ended with. */
  async function watch(
    counts: () => { waiting: number; inFlight: number },
    seconds: number,
    lastChangeAt = () => 0,
  ) {
    const stop = new AbortController();
    let outcome: unknown = 'still watching';
    const watching = watchForStepWorker(
      { url: 'https://sqs.eu-west-1.amazonaws.com/1/work', counts: async () => counts() },
      jobs,
      lastChangeAt,
      stop.signal,
      deployed,
    ).then(
      () => 'stopped',
      (error: unknown) => error,
    );
    void watching.then((value) => {
      outcome = value;
    });
    await vi.advanceTimersByTimeAsync(seconds * 1000);
    stop.abort();
    await vi.advanceTimersByTimeAsync(0);
    await watching;
    return outcome;
  }

  it('says so when messages wait and none is in flight for 20 s', async () => {
    const outcome = await watch(() => ({ waiting: 1, inFlight: 0 }), 30);
    expect(outcome).toBeInstanceOf(CliError);
    expect((outcome as CliError).message).toMatch(
      /^no step worker received a message from the work queue .* within 20 s: 1 message\(s\) waiting in eu-west-1, .*its SQS event source mapping enabled/,
    );
  });

  it('says nothing of a busy queue, an empty one, or jobs that move', async () => {
    expect(await watch(() => ({ waiting: 40, inFlight: 5 }), 60)).toBe('stopped');
    expect(await watch(() => ({ waiting: 0, inFlight: 0 }), 60)).toBe('stopped');
    expect(
      await watch(
        () => ({ waiting: 3, inFlight: 0 }),
        60,
        () => Date.now(),
      ),
    ).toBe('stopped');
    // A message taken now and then restarts the window.
    let reading = 0;
    expect(await watch(() => ({ waiting: 2, inFlight: reading++ % 8 === 7 ? 1 : 0 }), 60)).toBe('stopped');
  });
});
