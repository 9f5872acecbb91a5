/**
 * The stack's rules as synthesized here (./template-rules.ts says what they are): the dev stage,
 * once per process, and a test's "what if" (`stackRules(edit)`). An AwsWorld asks
 * template-rules.ts's `devStackRules`, which loads this module only when it synthesizes.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { HTTP_API_MAX_INTEGRATION_TIMEOUT_MS } from '../../../../scripts/lambda/api-gateway';
import type { FilterPattern } from '../../../../scripts/lambda/dynamodb-stream-source';
import { ingestDeliveryRules } from '../../../../scripts/lambda/ingest-rules';
import type { RecursiveLoop } from '../../../../scripts/lambda/recursion';
import { SQS_DEFAULT_MAX_MESSAGE_BYTES } from '../../../../scripts/lambda/sqs-trace-proxy';
import { type SynthesizedStage, synthStage } from '../../../infra/support/synth-stage';
import type { StackRules, StreamFunctionRules } from './template-rules';

let synthesized: SynthesizedStage | undefined;

/** The dev stage as synthesized (once per process: synthesis takes seconds). */
export function synthesizedDevStage(): SynthesizedStage {
  synthesized ??= synthStage({ stage: 'dev' }, { bundle: false });
  return synthesized;
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
