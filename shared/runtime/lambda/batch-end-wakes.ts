/**
 * The api function's wake of a batch whose job it ended: a cancel through the job API (`POST
 * /jobs/{id}/cancel`, a bulk cancel) of a batch's job. The step worker wakes a batch when a step
 * ends one of its jobs (ingest-wake.ts's `batchEndWake`); a job cancelled while its message waits
 * on the queue ends here, and the worker that takes the message later has no step to run, so
 * without this nobody would count it: a finished batch whose retried job was cancelled would keep
 * the job in flight, its summary.csv, index.html and totals as before the retry. Woken, the ingest
 * function counts the job (the batch finishes again) and rewrites the outputs from its jobs, as the
 * local cancel does (shared/ingest/settled-batch.ts). A chunk loaded by functions/api on the first
 * such end (the handler keeps the batch ids); a failure is logged (the job's cancel stands).
 */
import { awsClientConfig } from '../../backends/aws/clients';
import { ingestVariables } from '../../backends/aws/ingest-variables';
import { namedErrorMessage } from '../../errors/error-message';
import { batchEndWake } from './ingest-wake';
import type { JobsRuntime } from './jobs-runtime';

type Env = Readonly<Record<string, string | undefined>>;

/** The wake of one instance, built on its first use; undefined while the stack names no ingest function. */
let built: { wake: ReturnType<typeof batchEndWake> } | undefined;

/**
 * Wakes each batch (the ingest function invoked asynchronously), unless the stack names no ingest
 * function (OPFLOW_INGEST_FUNCTION_NAME: then the sweeper's pass is all there is).
 */
export async function wakeEndedBatches(
  runtime: JobsRuntime,
  /** The batches of the jobs the invocation ended: taken (the set is emptied). */
  ended: Set<string>,
  env: Env = process.env,
): Promise<void> {
  const batchIds = [...ended];
  ended.clear();
  const functionName = env[ingestVariables.functionName]?.trim();
  if (!functionName) return;
  built ??= {
    wake: batchEndWake(
      runtime.aws.clients.documents,
      runtime.config.tableName,
      awsClientConfig(runtime.config),
      functionName,
    ),
  };
  for (const batchId of batchIds) {
    try {
      await built.wake(batchId, runtime.deps.clock.now());
    } catch (error) {
      runtime.observability.logger.warn(
        "could not wake the ended job's batch; the sweeper's next pass looks at a running one",
        { batchId, error: namedErrorMessage(error) },
      );
    }
  }
}
