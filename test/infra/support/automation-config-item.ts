/**
 * The automation config item as the synthesized template writes it: the putItem call of its
 * Custom::OpflowAutomationConfig resource (an AwsCustomResource), with the table's Ref filled in,
 * so a test can make the same call against DynamoDB Local and read it back as a function would.
 */
import type { Template } from 'aws-cdk-lib/assertions';

/** The one putItem call the template makes at deploy, with `tableName` for the table's Ref. */
export function automationConfigPut(
  template: Template,
  tableName = 'jobs',
): { TableName: string; Item: { PK: { S: string }; SK: { S: string }; body: { S: string } } } {
  const resources = Object.values(template.findResources('Custom::OpflowAutomationConfig'));
  if (resources.length !== 1) throw new Error(`expected one config item, found ${resources.length}`);
  const update = resources[0]!['Properties']['Update'] as unknown;
  // The call is JSON joined around the table's Ref (Fn::Join ["", [...]]), or a plain string.
  const text =
    typeof update === 'string'
      ? update
      : (update as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1]
          .map((part) => (typeof part === 'string' ? part : tableName))
          .join('');
  const call = JSON.parse(text) as { service: string; action: string; parameters: unknown };
  if (call.service !== 'DynamoDB' || call.action !== 'putItem')
    throw new Error(`unexpected call ${call.service}.${call.action}`);
  return call.parameters as ReturnType<typeof automationConfigPut>;
}

/** The webhook mappings and schedules the template's config item holds. */
export function automationConfigBody(template: Template): {
  webhooks: Record<string, unknown>;
  schedules: { name: string }[];
} {
  return JSON.parse(automationConfigPut(template).Item.body.S);
}

/** The environment variables of the function named `functionName`. */
export function functionVariables(template: Template, functionName: string): Record<string, unknown> {
  const fn = Object.values(template.findResources('AWS::Lambda::Function')).find(
    (resource) => resource['Properties']['FunctionName'] === functionName,
  );
  if (!fn) throw new Error(`no function ${functionName}`);
  return fn['Properties']['Environment']?.['Variables'] ?? {};
}
