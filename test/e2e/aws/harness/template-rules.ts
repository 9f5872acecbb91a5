/**
 * The service rules the simulated deployment enforces, read from the stack as `cdk synth` writes
 * it (the dev stage, functions not bundled), never from a copy of the settings: each function's
 * `RecursiveLoop` (absent is Lambda's default, `Terminate`), the work queue's maximum message size,
 * the stream event sources' batch sizes and filters (the events and callback functions), and how
 * uploads reach the ingest function (its bucket notification, its asynchronous invocation settings).
 * The synthesis is ./template-synth.ts, loaded only by the process that synthesizes (the CDK app's
 * modules take seconds to load).
 */
import { buildOnce } from '../../../../scripts/lambda/build-once';
import type { FilterPattern } from '../../../../scripts/lambda/dynamodb-stream-source';
import type { IngestDeliveryRules } from '../../../../scripts/lambda/ingest-rules';
import type { RecursiveLoop } from '../../../../scripts/lambda/recursion';
import { STACK_RULES_HOME_ENV } from '../../../support/stack-rules.global';

export interface FunctionRules {
  functionName: string;
  recursiveLoop: RecursiveLoop;
  /** The function's `Timeout` (absent: Lambda's default, 3 s). */
  timeoutMs: number;
}

export interface StackRules {
  worker: FunctionRules;
  /** The ingest function: its bucket notification and asynchronous invocation settings. */
  ingest: IngestDeliveryRules;
  api: FunctionRules & { integrationTimeoutMs: number };
  /** The events function and its stream event source mapping (records per batch, filter patterns). */
  events: StreamFunctionRules;
  /** The callback function and its stream event source mapping. */
  callbacks: StreamFunctionRules;
  workQueueMaxMessageBytes: number;
}

/** A function on the job table's stream: its mapping's records per batch and filter patterns. */
export type StreamFunctionRules = FunctionRules & { batchSize: number; filters: FilterPattern[] };

/**
 * The dev stage's rules, synthesized once per vitest run (its folder in `OPFLOW_TEST_STACK_RULES`,
 * made by test/support/stack-rules.global.ts): the first process to ask synthesizes them
 * and records them (scripts/lambda/build-once.ts: a lock, the record renamed into place); the others
 * wait for it, their emulators starting meanwhile, and read them. Each aws e2e file synthesized the
 * stack itself before: seconds of CPU per file (17 s, 34 s at load 15), the event loop held. The
 * sources do not change during a run; a run without the folder (another runner) synthesizes here.
 */
export async function devStackRules(): Promise<StackRules> {
  const home = process.env[STACK_RULES_HOME_ENV];
  const synthesize = async () => (await import('./template-synth')).stackRules();
  if (!home) return synthesize();
  const { record } = await buildOnce<StackRules>({
    home,
    build: synthesize,
    fresh: async () => true,
  });
  return record;
}
