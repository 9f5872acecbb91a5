/**
 * What `opflow --backend aws` says when the stack it is pointed at is not all there: a job table, a
 * queue or a report bucket that does not exist where the command looks (the SDK's own words name
 * none of them), and a work queue that no step worker reads (a command waiting for its jobs would
 * otherwise wait for ever). Each message names the resource, the variable it came from, where it
 * was looked for, and what to run. Emulators that do not answer at all are said by the caller
 * (context.ts: "nothing listens at ...").
 */
import type { Job } from '../engine/job-record';
import type { Backend, WorkQueueReading } from '../runtime/backend';
import { CliError, ExitCode } from './exit-codes';

type Env = Readonly<Record<string, string | undefined>>;

/** The error and its causes, outermost first (a wrapped SDK error keeps its name in `cause`). */
function chain(error: unknown): { name?: unknown; Code?: unknown; message?: unknown }[] {
  const errors: { name?: unknown; Code?: unknown; message?: unknown }[] = [];
  for (
    let at = error;
    at && typeof at === 'object' && errors.length < 5;
    at = (at as { cause?: unknown }).cause
  )
    errors.push(at as { name?: unknown; Code?: unknown; message?: unknown });
  return errors;
}

const loopback = (url: string | undefined) =>
  url !== undefined && /^https?:\/\/(127\.|localhost|\[::1\])/.test(url);

/** Where a service was looked for: its endpoint (an emulator), else the region. */
function where(env: Env, service: 'DYNAMODB' | 'SQS' | 'S3'): { text: string; local: boolean } {
  const endpoint = env[`AWS_ENDPOINT_URL_${service}`] ?? env.AWS_ENDPOINT_URL;
  if (endpoint) return { text: `at ${endpoint}`, local: loopback(endpoint) };
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  return { text: region ? `in ${region}` : 'in the default region', local: false };
}

/** What to do about a resource that is not there. */
function whatToRun(local: boolean): string {
  return local
    ? '`npm run aws-local` creates new names at every start: load its .opflow/aws-local/aws-local.env again, or start it'
    : "deploy the stack there (`npx cdk deploy`), or point the variables (or OPFLOW_STACK_OUTPUTS) at a deployed stack's outputs; `opflow --backend aws doctor` checks them all";
}

/**
 * The message for an error of a stack resource that does not exist (the job table, a queue, the
 * report bucket), or undefined for any other error.
 */
export function missingAwsResource(error: unknown, env: Env): string | undefined {
  for (const item of chain(error)) {
    const name = String(item.name ?? '');
    const code = String(item.Code ?? '');
    const message = String(item.message ?? '');
    if (name === 'ResourceNotFoundException' && !/secret/i.test(message)) {
      const at = where(env, 'DYNAMODB');
      return `the job table ${env.OPFLOW_TABLE_NAME ?? '(OPFLOW_TABLE_NAME)'} (OPFLOW_TABLE_NAME) does not exist ${at.text} (${message}): ${whatToRun(at.local)}`;
    }
    if (name === 'QueueDoesNotExist' || code === 'AWS.SimpleQueueService.NonExistentQueue') {
      const at = where(env, 'SQS');
      return `the work queue ${env.OPFLOW_QUEUE_URL ?? '(OPFLOW_QUEUE_URL)'} (OPFLOW_QUEUE_URL), or its dead-letter queue, does not exist ${at.text}: ${whatToRun(at.local)}`;
    }
    if (name === 'NoSuchBucket') {
      const at = where(env, 'S3');
      return `the report bucket ${env.OPFLOW_BUCKET_NAME ?? '(OPFLOW_BUCKET_NAME)'} (OPFLOW_BUCKET_NAME) does not exist ${at.text}: ${whatToRun(at.local)}`;
    }
  }
  return undefined;
}

/** How long a waiting command lets the work queue hold messages that nobody receives before it says so. */
export const consumerLimitMs = 20_000;

/**
 * The work queue of a backend whose jobs run elsewhere (aws: `work.queue`, GetQueueAttributes as
 * `opflow doctor` reads it), or undefined for a backend whose work runs here.
 */
export function workQueueProbe(backend: Backend): WorkQueueReading | undefined {
  return backend.work.where === 'elsewhere' ? backend.work.queue : undefined;
}

/**
 * Rejects with a CliError when the work queue holds messages ready to run and none in flight, with no
 * change to the watched jobs, through `consumerLimitMs` of readings every 2 s: no step worker reads
 * the queue (not deployed, its event source disabled, or `npm run aws-local` not running). A queue
 * with a message in flight, a delayed message (a job waiting for its token) or a job that changed
 * starts the window again, so a busy stack is never taken for a missing worker. Resolves when
 * `signal` aborts.
 */
export async function watchForStepWorker(
  probe: WorkQueueReading,
  jobs: readonly Job[],
  lastChangeAt: () => number,
  signal: AbortSignal,
  env: Env,
  limitMs = consumerLimitMs,
): Promise<void> {
  let stuckSince: number | undefined;
  while (!signal.aborted) {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, 2_000);
      signal.addEventListener('abort', done, { once: true });
    });
    if (signal.aborted) return;
    let waiting = 0;
    let inFlight = 0;
    try {
      ({ waiting, inFlight } = await probe.counts());
    } catch {
      // Not readable (permissions): the watchdog says nothing rather than guess.
      return;
    }
    const now = Date.now();
    const stuck = waiting > 0 && inFlight === 0 && now - lastChangeAt() >= 2_000;
    stuckSince = stuck ? (stuckSince ?? now) : undefined;
    if (stuckSince !== undefined && now - stuckSince >= limitMs && now - lastChangeAt() >= limitMs) {
      const first = jobs[0]?.id ?? '';
      const at = where(env, 'SQS');
      throw new CliError(
        `no step worker received a message from the work queue ${probe.url} (OPFLOW_QUEUE_URL) within ${limitMs / 1000} s: ` +
          `${waiting} message(s) waiting ${at.text}, none in flight, no change to the job${jobs.length === 1 ? '' : 's'} followed. ` +
          (at.local
            ? 'Start `npm run aws-local`, which runs the step worker (and load its aws-local.env again), '
            : "Check the stack's step worker: its SQS event source mapping enabled, its logs and its errors alarm, ") +
          `then \`opflow --backend aws status ${first}\`: the job${jobs.length === 1 ? ' is' : 's are'} kept and run${jobs.length === 1 ? 's' : ''} once a step worker reads the queue`,
        ExitCode.environment,
      );
    }
  }
}
