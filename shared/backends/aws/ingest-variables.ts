/**
 * The variables of the ingest function, named once: those it reads (set by the stack in
 * infra/lib/inbox-ingestion.ts, by aws-local and by the e2e harness in scripts/lambda/ingest-delivery.ts)
 * and the one that names it to the functions that invoke it (the sweeper's minute pass, the step
 * worker when a job of a batch ends). Plain strings: the stack, the functions and the scripts import
 * them without loading any client.
 */
export const ingestVariables = {
  /**
   * The ingest function's name, for the functions that invoke it asynchronously: the sweeper (an
   * entry of the ingest schedule is due), the step worker (a job of a batch ended) and the api (it
   * cancelled a batch's job). Unset: they leave the ingest function alone.
   */
  functionName: 'OPFLOW_INGEST_FUNCTION_NAME',
  /** The ingest dead-letter queue's URL: a batch stopped by its budget of rounds leaves a notice there. */
  deadLetterQueueUrl: 'OPFLOW_INGEST_DLQ_URL',
  /** Ingest drivers at once (one slot item each in the job table); default 2. */
  drivers: 'OPFLOW_INGEST_DRIVERS',
  /** Rounds that changed nothing a batch may take before it is stopped as a runaway; default 8,640. */
  continuationBudget: 'OPFLOW_INGEST_CONTINUATION_BUDGET',
} as const;
