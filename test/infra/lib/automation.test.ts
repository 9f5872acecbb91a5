// Callbacks, webhooks and schedules in the CDK app, from a config file with schedules and webhooks: EventBridge Scheduler
// schedules (time zone, retries, dead-letter queue, paused ones disabled) targeting the schedules
// function; the webhook route's own function, without IAM and with its own throttle; the callback sender every
// minute; each function with least privilege. cdk-nag runs during synth (a finding fails it).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { automationConfigBody } from '../support/automation-config-item';
import { type SynthesizedStage, synthStage } from '../support/synth-stage';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

let synth: SynthesizedStage;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'opflow-cdk-config-'));
  const file = join(dir, 'opflow.config.json');
  writeFileSync(
    file,
    JSON.stringify({
      webhooks: { tracker: { workflow: 'patent-count', input: { query: { $from: '/issue/title' } } } },
      schedules: [
        {
          name: 'weekly-counts',
          cron: '0 6 * * 1',
          timezone: 'Europe/Berlin',
          workflow: 'patent-count',
          input: { query: 'battery' },
          jitter: '5m',
        },
        {
          name: 'paused-one',
          cron: '30 2 1 * *',
          workflow: 'patent-count',
          input: { query: 'x' },
          paused: { reason: 'budget' },
        },
      ],
    }),
  );
  synth = synthStage({ stage: 'dev', opflowConfig: file }, { bundle: false });
});

const statementsOf = (roleLogicalId: string): Statement[] =>
  Object.values(synth.template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleLogicalId }]))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  synth.stack.getLogicalId(construct.node.defaultChild as CfnElement);
const actions = (statements: Statement[]) =>
  statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));

describe('automation resources', () => {
  it('creates one EventBridge Scheduler schedule per schedule, in its time zone, with retries and a DLQ', () => {
    const { template, stack } = synth;
    const target = stack.automation.scheduleTarget!;
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Name: 'opflow-dev-weekly-counts',
      ScheduleExpression: 'cron(0 6 ? * MON *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 5 },
      Target: Match.objectLike({
        Arn: { 'Fn::GetAtt': [logicalId(target.function), 'Arn'] },
        DeadLetterConfig: {
          Arn: { 'Fn::GetAtt': [logicalId(stack.automation.scheduleDeadLetterQueue!), 'Arn'] },
        },
        RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 5 },
        Input: Match.stringLikeRegexp('"slot":"<aws.scheduler.scheduled-time>"'),
      }),
    });
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Name: 'opflow-dev-paused-one',
      ScheduleExpression: 'cron(30 2 1 * ? *)',
      State: 'DISABLED',
    });
  });

  it('gives the schedules function only job creation: no API keys, no report reads (only its own inputs)', () => {
    const statements = statementsOf(logicalId(synth.stack.automation.scheduleTarget!.role));
    const all = actions(statements);
    expect(all).not.toContain('secretsmanager:GetSecretValue');
    const s3 = statements.filter((s) => actions([s]).some((a) => a.startsWith('s3:')));
    expect(actions(s3).sort()).toEqual(['s3:GetObject', 's3:PutObject']);
    expect(JSON.stringify(s3.map((s) => s.Resource))).toContain('/reports/*/input.json');
    expect(JSON.stringify(s3.map((s) => s.Resource))).not.toMatch(/reports\/\*"/);
    const dynamo = statements.find((s) => actions([s]).some((a) => a.startsWith('dynamodb:')))!;
    expect(dynamo.Condition).toEqual({
      'ForAllValues:StringLike': {
        'dynamodb:LeadingKeys': ['JOB#*', 'IDEM#*', 'SCHED#*', 'CBQ', 'CBJOB#*', 'HIST#*'],
      },
    });
    expect(actions([dynamo])).not.toContain('dynamodb:Scan');
  });

  it('routes POST /webhooks/{source} to a function of its own without IAM, with the route throttle of the settings', () => {
    const { template, stack } = synth;
    const receiver = stack.automation.webhookReceiver;
    const integrations = template.findResources('AWS::ApiGatewayV2::Integration');
    const route = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).find(
      (r) => r.Properties.RouteKey === 'POST /webhooks/{source}',
    )!;
    expect(route.Properties.AuthorizationType).toBe('NONE');
    const target = (route.Properties.Target as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    const integration = integrations[(target[1] as { Ref: string }).Ref]!;
    expect(integration.Properties.IntegrationUri).toEqual({
      'Fn::GetAtt': [logicalId(receiver.function), 'Arn'],
    });
    // Every other route goes to the api function: the webhook function answers nothing else.
    const others = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).filter(
      (r) => r !== route,
    );
    expect(others.length).toBeGreaterThan(5);
    for (const other of others)
      expect(JSON.stringify(other.Properties.Target)).not.toContain((target[1] as { Ref: string }).Ref);
    // The dev stage's route throttle (webhooks.throttle), apart from the API's default throttle.
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
      RouteSettings: {
        'POST /webhooks/{source}': { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
      },
    });
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    const fn = functions.find((f) => f.Properties.FunctionName === 'opflow-dev-webhooks')!;
    expect(fn.Properties.Environment.Variables.OPFLOW_WEBHOOK_SECRET_PREFIX).toBe('opflow-dev/webhook/');
    expect(fn.Properties.Environment.Variables.OPFLOW_WEBHOOK_MAPPINGS).toBeUndefined();
    // No reserved concurrency unless the settings ask for it (a 10-concurrency account can reserve none).
    expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
    // The api function no longer reads webhook secrets.
    const apiFn = functions.find((f) => f.Properties.FunctionName === 'opflow-dev-api')!;
    expect(apiFn.Properties.Environment.Variables.OPFLOW_WEBHOOK_SECRET_PREFIX).toBeUndefined();
    const apiSecrets = statementsOf(logicalId(stack.api.role)).filter((s) =>
      actions([s]).includes('secretsmanager:GetSecretValue'),
    );
    expect(apiSecrets).toEqual([]);
    expect((automationConfigBody(template).webhooks['tracker'] as { workflow: string }).workflow).toBe(
      'patent-count',
    );
  });

  it('gives the webhook function job creation, its delivery log and the webhook secrets only', () => {
    const statements = statementsOf(logicalId(synth.stack.automation.webhookReceiver.role));
    const all = actions(statements);
    // Only a large input: written, and read back when a replay finds its job.
    expect(all.filter((a) => a.startsWith('s3:'))).toEqual(['s3:GetObject', 's3:PutObject']);
    const s3 = statements.find((s) => actions([s]).includes('s3:PutObject'))!;
    expect(JSON.stringify(s3.Resource)).toContain('/reports/*/input.json');
    const secrets = statements.find((s) => actions([s]).includes('secretsmanager:GetSecretValue'))!;
    expect(JSON.stringify(secrets.Resource)).toContain('secret:opflow-dev/webhook/*');
    const items = statements.find((s) => actions([s]).includes('dynamodb:PutItem'))!;
    expect(items.Condition).toEqual({
      'ForAllValues:StringLike': {
        'dynamodb:LeadingKeys': ['JOB#*', 'IDEM#*', 'CBQ', 'CBJOB#*', 'HIST#*', 'HOOKLOG'],
      },
    });
    expect(all).not.toContain('dynamodb:Scan');
    expect(all).not.toContain('dynamodb:UpdateTable');
  });

  it('reserves the webhook function its concurrency when the settings ask for it', () => {
    const reserved = synthStage(
      {
        stage: 'dev',
        opflowStack: JSON.stringify({
          stages: {
            dev: { webhooks: { throttle: { rateLimit: 2, burstLimit: 4 }, reservedConcurrency: 3 } },
          },
        }),
      },
      { bundle: false },
    );
    const fn = Object.values(reserved.template.findResources('AWS::Lambda::Function')).find(
      (f) => f.Properties.FunctionName === 'opflow-dev-webhooks',
    )!;
    expect(fn.Properties.ReservedConcurrentExecutions).toBe(3);
    reserved.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      RouteSettings: { 'POST /webhooks/{source}': { ThrottlingRateLimit: 2, ThrottlingBurstLimit: 4 } },
    });
  });

  it('wakes the callback sender from the job table stream (no timer, no queue), with the outbox, jobs and its own secrets only', () => {
    const { template, stack } = synth;
    const sender = stack.automation.callbackSender;
    // No schedule runs it: nothing loops when nothing is due.
    const rules = Object.values(template.findResources('AWS::Events::Rule'));
    expect(JSON.stringify(rules)).not.toContain(logicalId(sender.function));
    // Its one event source: the job table's stream, filtered to outbox entries written or marked due.
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (mapping) =>
        JSON.stringify(mapping.Properties.FunctionName) ===
        JSON.stringify({ Ref: logicalId(sender.function) }),
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0]!.Properties).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.storage.table), 'StreamArn'] },
      StartingPosition: 'LATEST',
      MaximumRetryAttempts: 2,
    });
    expect(
      mappings[0]!.Properties.FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern)),
    ).toEqual([
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: { Keys: { PK: { S: ['CBQ'] } }, NewImage: { due: { BOOL: [true] } } },
      },
    ]);
    // DynamoDB Streams serves two readers of a shard without throttling: the events and callback functions.
    const streamReaders = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (mapping) => JSON.stringify(mapping.Properties.EventSourceArn).includes('StreamArn'),
    );
    expect(streamReaders).toHaveLength(2);
    // No callback queue any more, and no function is given one.
    expect(JSON.stringify(template.findResources('AWS::SQS::Queue'))).not.toContain('callbacks');
    expect(JSON.stringify(template.toJSON())).not.toContain('OPFLOW_CALLBACK_QUEUE_URL');
    // It sends nothing to a queue that triggers it: Lambda's default loop detection stays.
    const senderResource = template.toJSON().Resources[logicalId(sender.function)];
    expect(senderResource.Properties.RecursiveLoop).toBeUndefined();
    // The sweeper marks the due entries: Query and UpdateItem on the outbox's partition only.
    const sweeperStatements = statementsOf(logicalId(stack.sweeper.role));
    expect(sweeperStatements).toContainEqual(
      expect.objectContaining({
        Action: ['dynamodb:Query', 'dynamodb:UpdateItem'],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CBQ'] } },
      }),
    );
    const statements = statementsOf(logicalId(sender.role));
    const all = actions(statements);
    expect(all.filter((a) => a.startsWith('sqs:'))).toEqual([]);
    expect(all).not.toContain('s3:PutObject');
    const dynamo = statements.find((s) => actions([s]).some((a) => a.startsWith('dynamodb:')))!;
    expect(dynamo.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CBQ', 'CBJOB#*', 'JOB#*'] },
    });
    const secrets = statements.filter((s) => actions([s]).includes('secretsmanager:GetSecretValue'));
    expect(JSON.stringify(secrets)).toContain('opflow-dev/callback-signing/*');
    expect(JSON.stringify(secrets)).not.toContain('api-key');
    for (const tenant of stack.config.tenants) {
      template.hasResourceProperties('AWS::SecretsManager::Secret', {
        Name: `opflow-dev/callback-signing/${tenant}`,
        GenerateSecretString: Match.objectLike({ PasswordLength: 64 }),
      });
    }
  });
});
