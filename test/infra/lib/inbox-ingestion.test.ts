// The inbox ingestion construct in the synthesized stack: uploads under inbox/ invoke the ingest
// function asynchronously (no queue, no event source mapping: nothing polls at idle), with Lambda's
// two retries and the ingest dead-letter queue as the on-failure destination; the function may
// invoke itself (by its name: no dependency cycle), the sweeper may invoke it and read the ingest
// schedule's partition only, and the api may invoke it (a batch's job it cancelled); all inside the
// stack's cdk-nag rules.
import { describe, expect, it } from 'vitest';
import { ingestDeliveryRules } from '../../../scripts/lambda/ingest-rules';
import { synthStage } from '../support/synth-stage';

describe('inbox ingestion', () => {
  const { template, stack } = synthStage({ stage: 'dev' }, { bundle: false });
  const json = template.toJSON() as { Resources: Record<string, unknown>; Outputs: Record<string, unknown> };
  type Resource = { Type: string; Properties: Record<string, unknown> };
  const resources = (type: string) =>
    Object.entries(json.Resources as Record<string, Resource>).filter(
      ([, resource]) => resource.Type === type,
    );
  const ingestFn = () =>
    resources('AWS::Lambda::Function').find(([, r]) =>
      String(r.Properties.FunctionName).endsWith('-ingest'),
    )!;

  it('invokes the ingest function for every object created under inbox/, and nothing else', () => {
    const [notification] = resources('Custom::S3BucketNotifications');
    const config = notification?.[1].Properties.NotificationConfiguration as Record<string, unknown>;
    expect(config.QueueConfigurations).toBeUndefined();
    const rules = ingestDeliveryRules(json.Resources as never);
    expect(rules.functionId).toBe(ingestFn()[0]);
    expect(rules.notification).toMatchObject({ events: ['s3:ObjectCreated:*'], prefix: 'inbox/' });
    // S3 may invoke it (the permission the notification needs), from this bucket only.
    const permission = resources('AWS::Lambda::Permission').find(
      ([, r]) => r.Properties.Principal === 's3.amazonaws.com',
    );
    expect(JSON.stringify(permission?.[1].Properties.FunctionName)).toContain(ingestFn()[0]);
    expect(permission?.[1].Properties.SourceArn).toBeDefined();
  });

  it('has no ingest queue and no event source mapping: Lambda retries twice, then the dead-letter queue', () => {
    expect(resources('AWS::SQS::Queue').map(([, r]) => String(r.Properties.QueueName))).not.toContainEqual(
      expect.stringMatching(/-ingest$/),
    );
    const mappings = resources('AWS::Lambda::EventSourceMapping').filter(([, r]) =>
      JSON.stringify(r.Properties.FunctionName).includes(ingestFn()[0]),
    );
    expect(mappings).toEqual([]);
    const rules = ingestDeliveryRules(json.Resources as never);
    expect(rules).toMatchObject({
      retryAttempts: 2,
      maxEventAgeSeconds: 21_600,
      recursiveLoop: 'Allow',
      timeoutMs: 900_000,
    });
    const dlq = resources('AWS::SQS::Queue').find(([id]) => id === rules.onFailureQueueId);
    expect(String(dlq?.[1].Properties.QueueName)).toMatch(/-ingest-dlq$/);
    const env = (ingestFn()[1].Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining([
        'OPFLOW_TABLE_NAME',
        'OPFLOW_QUEUE_URL',
        'OPFLOW_BUCKET_NAME',
        'OPFLOW_INGEST_DLQ_URL',
      ]),
    );
    expect(env.OPFLOW_INGEST_DRIVERS).toBe('2');
    expect(Object.keys(env)).not.toContain('OPFLOW_INGEST_QUEUE_URL');
  });

  it('lets the ingest function invoke itself by name, and the sweeper invoke it and read its schedule', () => {
    const policies = resources('AWS::IAM::Policy');
    const statementsOf = (roleId: string) =>
      policies
        .filter(([, r]) => JSON.stringify(r.Properties.Roles).includes(roleId))
        .flatMap(
          ([, r]) => (r.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
        );
    const ingestRole = stack.getLogicalId(stack.inbox.ingest.role.node.defaultChild as never);
    const selfInvoke = statementsOf(ingestRole).find((s) => s.Action === 'lambda:InvokeFunction');
    expect(JSON.stringify(selfInvoke?.Resource)).toContain(':function:opflow-dev-ingest');
    const sweeperRole = stack.getLogicalId(stack.sweeper.role.node.defaultChild as never);
    const sweeper = statementsOf(sweeperRole);
    const invoke = sweeper.find((s) => s.Action === 'lambda:InvokeFunction');
    expect(JSON.stringify(invoke?.Resource)).toContain(ingestFn()[0]);
    expect(sweeper).toContainEqual(
      expect.objectContaining({
        Action: 'dynamodb:Query',
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['INGESTDUE'] } },
      }),
    );
    const sweeperFn = resources('AWS::Lambda::Function').find(([, r]) =>
      String(r.Properties.FunctionName).endsWith('-sweeper'),
    );
    const sweeperEnv = (sweeperFn![1].Properties.Environment as { Variables: Record<string, unknown> })
      .Variables;
    expect(JSON.stringify(sweeperEnv.OPFLOW_INGEST_FUNCTION_NAME)).toContain(ingestFn()[0]);
    // The api too: a batch's job it cancels (a retried item still queued) has the batch driven once.
    const apiRole = stack.getLogicalId(stack.api.role.node.defaultChild as never);
    const apiInvokes = statementsOf(apiRole).filter((s) => s.Action === 'lambda:InvokeFunction');
    expect(apiInvokes.map((s) => JSON.stringify(s.Resource))).toEqual([
      expect.stringContaining(ingestFn()[0]),
    ]);
    const apiFn = resources('AWS::Lambda::Function').find(([, r]) =>
      String(r.Properties.FunctionName).endsWith('-api'),
    );
    const apiEnv = (apiFn![1].Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.stringify(apiEnv.OPFLOW_INGEST_FUNCTION_NAME)).toContain(ingestFn()[0]);
  });

  it('names the ingest function in the outputs, and no ingest queue', () => {
    expect(Object.keys(json.Outputs)).toContain('IngestFunctionName');
    expect(Object.keys(json.Outputs)).not.toContain('IngestQueueUrl');
  });
});
