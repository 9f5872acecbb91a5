/**
 * The service rules the simulated deployment enforces, read from the stack as `cdk synth` writes
 * it (the dev stage, functions not bundled), never from a copy of the settings: each function's
 * `RecursiveLoop` (absent is Lambda's default, `Terminate`), the work queue's maximum message size,
 * the stream event sources' batch sizes and filters (the events and callback functions), and how
 * uploads reach the ingest function (its bucket notification, its asynchronous invocation settings).
 */
import type { CfnElement } from 'aws-cdk-lib';
import { HTTP_API_MAX_INTEGRATION_TIMEOUT_MS } from '../../../../scripts/lambda/api-gateway';
import { buildOnce } from '../../../../scripts/lambda/build-once';
import type { FilterPattern } from '../../../../scripts/lambda/dynamodb-stream-source';
import { type IngestDeliveryRules, ingestDeliveryRules } from '../../../../scripts/lambda/ingest-rules';
import type { RecursiveLoop } from '../../../../scripts/lambda/recursion';
import { SQS_DEFAULT_MAX_MESSAGE_BYTES } from '../../../../scripts/lambda/sqs-trace-proxy';
import { type SynthesizedStage, synthStage } from '../../../infra/support/synth-stage';
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

let synthesized: SynthesizedStage | undefined;

/** The dev stage as synthesized (once per process: synthesis takes seconds). */
export function synthesizedDevStage(): SynthesizedStage {
  synthesized ??= synthStage({ stage: 'dev' }, { bundle: false });
  return synthesized;
}

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
  if (!home) return stackRules();
  const { record } = await buildOnce<StackRules>({
    home,
    build: async () => stackRules(),
    fresh: async () => true,
  });
  return record;
}

/** The rules of the synthesized stack, optionally after `edit` changes its template (a test's "what if"). */
export function stackRules(
  edit?: (resources: Record<string, { Properties: Record<string, unknown> }>) => void,
): StackRules {
  const { stack, template } = synthesizedDevStage();
  const resources = structuredClone(template.toJSON()['Resources']) as Record<
    string,
    { Properties: Record<string, unknown> }
  >;
  edit?.(resources);
  const propertiesOf = (construct: { node: { defaultChild?: unknown } }) => {
    const resource = resources[stack.getLogicalId(construct.node.defaultChild as CfnElement)];
    if (!resource) throw new Error('the synthesized template lacks a resource the harness needs');
    return resource.Properties;
  };
  const functionRules = (construct: { node: { defaultChild?: unknown } }) => {
    const properties = propertiesOf(construct);
    return {
      functionName: String(properties['FunctionName']),
      recursiveLoop: (properties['RecursiveLoop'] ?? 'Terminate') as RecursiveLoop,
      timeoutMs: Number(properties['Timeout'] ?? 3) * 1000,
    };
  };
  // The job API's integration: the one whose URI names the api function.
  const apiId = stack.getLogicalId(stack.api.function.node.defaultChild as CfnElement);
  const integration = Object.values(resources).find(
    (resource) =>
      (resource as { Type?: string }).Type === 'AWS::ApiGatewayV2::Integration' &&
      JSON.stringify(resource.Properties['IntegrationUri']).includes(`"${apiId}"`),
  );
  if (!integration) throw new Error('the synthesized template has no integration for the api function');
  const integrationTimeout = integration.Properties['TimeoutInMillis'];
  const maxMessage = propertiesOf(stack.workQueue.queue)['MaximumMessageSize'];
  // A function's stream mapping: the one whose FunctionName names that function.
  const streamRules = (construct: { node: { defaultChild?: unknown } }): StreamFunctionRules => {
    const id = stack.getLogicalId(construct.node.defaultChild as CfnElement);
    const mapping = Object.values(resources).find(
      (resource) =>
        (resource as { Type?: string }).Type === 'AWS::Lambda::EventSourceMapping' &&
        JSON.stringify(resource.Properties['FunctionName']).includes(`"${id}"`),
    );
    if (!mapping) throw new Error(`the synthesized template has no event source for ${id}`);
    const filterCriteria = mapping.Properties['FilterCriteria'] as
      | { Filters?: { Pattern: string }[] }
      | undefined;
    return {
      ...functionRules(construct),
      batchSize: Number(mapping.Properties['BatchSize'] ?? 100),
      filters: (filterCriteria?.Filters ?? []).map((filter) => JSON.parse(filter.Pattern) as FilterPattern),
    };
  };
  return {
    worker: functionRules(stack.worker.function),
    ingest: ingestDeliveryRules(resources),
    api: {
      ...functionRules(stack.api.function),
      integrationTimeoutMs:
        typeof integrationTimeout === 'number' ? integrationTimeout : HTTP_API_MAX_INTEGRATION_TIMEOUT_MS,
    },
    events: streamRules(stack.liveEvents.events.function),
    callbacks: streamRules(stack.automation.callbackSender.function),
    workQueueMaxMessageBytes: typeof maxMessage === 'number' ? maxMessage : SQS_DEFAULT_MAX_MESSAGE_BYTES,
  };
}
