/**
 * Assertions on the synthesized opflow stack, dev and prod: every property docs/guides/deploy.md
 * promises (queue, event source, table, bucket, secrets, functions, IAM, HTTP API, schedule, alarms,
 * dashboard, outputs). Each stage is synthesized once, in beforeAll, without bundling: these read the
 * template only, and a function's code does not depend on the stage (functionCode takes its name
 * alone). The bundled assets are tested on the app's synthesis (opflow-app.test.ts, function bundles).
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { JOB_RETENTION_DAYS, visibilityTimeoutSeconds } from '../../../infra/config';
import { JOB_ROUTES } from '../../../infra/lib/job-api';
import type { OpflowStack } from '../../../infra/lib/opflow-stack';
import { PIPELINE_METRICS } from '../../../infra/lib/pipeline-monitoring';
import { routeKey, routesServedBy } from '../../../shared/http/routes';
import { type SynthesizedStage, synthStage } from '../support/synth-stage';

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

let dev: SynthesizedStage;
let prod: SynthesizedStage;

beforeAll(() => {
  dev = synthStage({ stage: 'dev' }, { bundle: false });
  prod = synthStage({ stage: 'prod' }, { bundle: false });
});

const logicalId = (stack: OpflowStack, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

const resourcesOf = (template: Template, type: string) =>
  template.findResources(type) as Record<string, Resource>;

function onlyResource(template: Template, type: string, props?: Record<string, unknown>): [string, Resource] {
  const found = Object.entries(template.findResources(type, props ? { Properties: props } : undefined));
  expect(found, `exactly one ${type}`).toHaveLength(1);
  return found[0] as [string, Resource];
}

/** Every IAM statement attached to `roleId`, across the role's policies. */
function statementsOfRole(template: Template, roleId: string): Statement[] {
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties['Roles']) === JSON.stringify([{ Ref: roleId }]))
    .flatMap((policy) => (policy.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement);
}

const actionsOf = (statements: Statement[]) =>
  statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));

describe.each([
  ['dev', () => dev],
  ['prod', () => prod],
])('the %s stack', (stageName, stageOf) => {
  describe('work queue', () => {
    it('has a dead-letter queue after maxReceiveCount receives', () => {
      const { stack, template } = stageOf();
      template.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: `opflow-${stageName}-work`,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(stack, stack.workQueue.deadLetterQueue), 'Arn'] },
          maxReceiveCount: stack.config.queue.maxReceiveCount,
        },
      });
    });

    it('keeps messages and dead letters as long as the config says', () => {
      const { stack, template } = stageOf();
      const queues = resourcesOf(template, 'AWS::SQS::Queue');
      const day = 24 * 3600;
      expect(queues[logicalId(stack, stack.workQueue.queue)]?.Properties['MessageRetentionPeriod']).toBe(
        stack.config.queue.retentionDays * day,
      );
      expect(
        queues[logicalId(stack, stack.workQueue.deadLetterQueue)]?.Properties['MessageRetentionPeriod'],
      ).toBe(stack.config.queue.dlqRetentionDays * day);
    });

    it('keeps messages hidden for at least six times the worker timeout', () => {
      const { stack, template } = stageOf();
      const queue = resourcesOf(template, 'AWS::SQS::Queue')[logicalId(stack, stack.workQueue.queue)];
      const worker = resourcesOf(template, 'AWS::Lambda::Function')[logicalId(stack, stack.worker.function)];
      const visibility = queue?.Properties['VisibilityTimeout'] as number;
      expect(visibility).toBe(visibilityTimeoutSeconds(stack.config.worker));
      expect(visibility).toBeGreaterThanOrEqual(6 * (worker?.Properties['Timeout'] as number));
    });

    it('encrypts both queues with SQS-managed keys and refuses non-TLS access', () => {
      const { template } = stageOf();
      // The work queue and its dead-letter queue, and the on-failure queues of the ingest and events
      // functions.
      const queues = Object.values(resourcesOf(template, 'AWS::SQS::Queue'));
      expect(queues).toHaveLength(4);
      for (const queue of queues) expect(queue.Properties['SqsManagedSseEnabled']).toBe(true);
      const policies = Object.values(resourcesOf(template, 'AWS::SQS::QueuePolicy'));
      expect(policies).toHaveLength(4);
      for (const policy of policies) {
        expect(policy.Properties['PolicyDocument']).toMatchObject({
          Statement: expect.arrayContaining([
            expect.objectContaining({
              Effect: 'Deny',
              Action: 'sqs:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        });
      }
    });
  });

  describe('worker event source', () => {
    it('takes batch size, batching window and concurrency cap from config and reports item failures', () => {
      const { stack, template } = stageOf();
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, stack.workQueue.queue), 'Arn'] },
        FunctionName: { Ref: logicalId(stack, stack.worker.function) },
        BatchSize: stack.config.worker.batchSize,
        MaximumBatchingWindowInSeconds: stack.config.worker.maxBatchingWindowSeconds,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: stack.config.worker.maxConcurrency },
      });
    });

    it('lets the functions that feed their own queue run their chains (RecursiveLoop Allow), and no other', () => {
      const { stack, template } = stageOf();
      const functions = resourcesOf(template, 'AWS::Lambda::Function');
      expect(functions[logicalId(stack, stack.worker.function)]?.Properties['RecursiveLoop']).toBe('Allow');
      const allowed = Object.values(functions)
        .filter((fn) => fn.Properties['RecursiveLoop'] === 'Allow')
        .map((fn) =>
          String(fn.Properties['FunctionName']).replace(`${stack.config.names.resourcePrefix}-`, ''),
        );
      // The callback sender reads the table's stream and sends to no queue: Lambda's default stays.
      expect(allowed.sort()).toEqual(['ingest', 'step-worker']);
    });

    it('caps the concurrency of every SQS event source', () => {
      const { template } = stageOf();
      for (const mapping of Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping'))) {
        // The job table's stream (the events function) is read one invocation per shard, not scaled.
        if (mapping.Properties['StartingPosition'] !== undefined) continue;
        expect(mapping.Properties['ScalingConfig']).toMatchObject({ MaximumConcurrency: expect.any(Number) });
      }
    });

    it('uses no reserved concurrency on any function', () => {
      const { template } = stageOf();
      for (const fn of Object.values(resourcesOf(template, 'AWS::Lambda::Function'))) {
        expect(fn.Properties['ReservedConcurrentExecutions']).toBeUndefined();
      }
    });
  });

  describe('job table', () => {
    it('has the keys, indexes and TTL of docs/concepts/job-table.md, on demand, with point-in-time recovery', () => {
      const { template } = stageOf();
      const [, table] = onlyResource(template, 'AWS::DynamoDB::Table');
      expect(table.Properties).toMatchObject({
        TableName: `opflow-${stageName}-jobs`,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: 'PK', KeyType: 'HASH' },
          { AttributeName: 'SK', KeyType: 'RANGE' },
        ],
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
      const attributes = table.Properties['AttributeDefinitions'] as {
        AttributeName: string;
        AttributeType: string;
      }[];
      expect(attributes.map((a) => a.AttributeName).sort()).toEqual(
        [
          'GSI1PK',
          'GSI1SK',
          'GSI2PK',
          'GSI2SK',
          'GSI3PK',
          'GSI3SK',
          'GSI4PK',
          'GSI4SK',
          'GSI5PK',
          'GSI5SK',
          'PK',
          'SK',
        ].sort(),
      );
      for (const attribute of attributes) expect(attribute.AttributeType).toBe('S');
      expect(table.Properties['GlobalSecondaryIndexes']).toEqual([
        {
          IndexName: 'byStatus',
          KeySchema: [
            { AttributeName: 'GSI1PK', KeyType: 'HASH' },
            { AttributeName: 'GSI1SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'due',
          KeySchema: [
            { AttributeName: 'GSI2PK', KeyType: 'HASH' },
            { AttributeName: 'GSI2SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        {
          IndexName: 'byBatch',
          KeySchema: [
            { AttributeName: 'GSI3PK', KeyType: 'HASH' },
            { AttributeName: 'GSI3SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'byStatusShard',
          KeySchema: [
            { AttributeName: 'GSI4PK', KeyType: 'HASH' },
            { AttributeName: 'GSI4SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['tenant'] },
        },
        {
          IndexName: 'byBatchKeys',
          KeySchema: [
            { AttributeName: 'GSI5PK', KeyType: 'HASH' },
            { AttributeName: 'GSI5SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['tenant', 'status'] },
        },
      ]);
    });
  });

  describe('report bucket', () => {
    it('blocks public access, encrypts, versions and logs access to the log bucket', () => {
      const { stack, template } = stageOf();
      const bucket = resourcesOf(template, 'AWS::S3::Bucket')[logicalId(stack, stack.storage.reportBucket)];
      expect(bucket?.Properties).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        VersioningConfiguration: { Status: 'Enabled' },
        LoggingConfiguration: {
          DestinationBucketName: { Ref: logicalId(stack, stack.storage.accessLogBucket) },
          LogFilePrefix: 'report-bucket/',
        },
      });
    });

    it('expires reports with the job records, expires old versions and aborts unfinished uploads', () => {
      const { stack, template } = stageOf();
      const bucket = resourcesOf(template, 'AWS::S3::Bucket')[logicalId(stack, stack.storage.reportBucket)];
      const lifecycle = bucket?.Properties['LifecycleConfiguration'] as { Rules: Record<string, unknown>[] };
      const rules = lifecycle.Rules;
      const { retention } = stack.config;
      expect(rules).toEqual([
        {
          Id: 'expire-reports',
          Prefix: 'reports/',
          ExpirationInDays: JOB_RETENTION_DAYS + 1,
          Status: 'Enabled',
        },
        expect.objectContaining({
          Status: 'Enabled',
          NoncurrentVersionExpiration: { NoncurrentDays: retention.noncurrentVersionDays },
        }),
        expect.objectContaining({
          Status: 'Enabled',
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: retention.incompleteUploadDays },
        }),
      ]);
    });

    it('denies non-TLS and pre-TLS-1.2 requests on both buckets', () => {
      const { template } = stageOf();
      const policies = Object.values(resourcesOf(template, 'AWS::S3::BucketPolicy'));
      expect(policies).toHaveLength(2);
      for (const policy of policies) {
        const statements = (policy.Properties['PolicyDocument'] as { Statement: Record<string, unknown>[] })
          .Statement;
        expect(statements).toEqual(
          expect.arrayContaining([
            expect.objectContaining({
              Effect: 'Deny',
              Action: 's3:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
            expect.objectContaining({
              Effect: 'Deny',
              Action: 's3:*',
              Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } },
            }),
          ]),
        );
      }
    });

    it('keeps access logs private, encrypted and for a limited time', () => {
      const { stack, template } = stageOf();
      const logBucket = resourcesOf(template, 'AWS::S3::Bucket')[
        logicalId(stack, stack.storage.accessLogBucket)
      ];
      expect(logBucket?.Properties).toMatchObject({
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, RestrictPublicBuckets: true },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        LifecycleConfiguration: {
          Rules: expect.arrayContaining([
            expect.objectContaining({ ExpirationInDays: stack.config.retention.accessLogDays }),
          ]),
        },
      });
    });
  });

  describe('secrets', () => {
    it('creates the API key secret(s) under the prefix empty, and generates the callback signing secrets', () => {
      const { stack, template } = stageOf();
      const secrets = Object.values(resourcesOf(template, 'AWS::SecretsManager::Secret'));
      const byName = new Map(secrets.map((s) => [s.Properties['Name'], s.Properties]));
      const apiKeyNames = stack.config.tenants.map((tenant) => `opflow-${stageName}/api-key/${tenant}`);
      const callbackNames = stack.config.tenants.map(
        (tenant) => `opflow-${stageName}/callback-signing/${tenant}`,
      );
      expect([...byName.keys()].sort()).toEqual([...apiKeyNames, ...callbackNames].sort());
      for (const secret of secrets) expect(secret.Properties['SecretString']).toBeUndefined();
      for (const name of apiKeyNames) expect(byName.get(name)?.['GenerateSecretString']).toBeUndefined();
      for (const name of callbackNames)
        expect(byName.get(name)?.['GenerateSecretString']).toEqual({
          ExcludePunctuation: true,
          PasswordLength: 64,
        });
      template.hasOutput('ApiKeySecretPrefix', { Value: `opflow-${stageName}/api-key/` });
    });
  });

  describe('functions', () => {
    it('run Node.js 24 on arm64 without tracing (the default), a bundled ESM handler and the opflow environment', () => {
      const { stack, template } = stageOf();
      const functions = [stack.worker, stack.api, stack.sweeper];
      for (const fn of functions) {
        const resource = resourcesOf(template, 'AWS::Lambda::Function')[logicalId(stack, fn.function)];
        expect(resource?.Properties).toMatchObject({
          Runtime: 'nodejs24.x',
          Architectures: ['arm64'],
          Handler: 'index.handler',
          LoggingConfig: { LogGroup: { Ref: logicalId(stack, fn.logGroup) } },
          Environment: {
            Variables: {
              OPFLOW_TABLE_NAME: { Ref: logicalId(stack, stack.storage.table) },
              OPFLOW_QUEUE_URL: { Ref: logicalId(stack, stack.workQueue.queue) },
              OPFLOW_BUCKET_NAME: { Ref: logicalId(stack, stack.storage.reportBucket) },
              OPFLOW_API_KEY_SECRET_PREFIX: `opflow-${stageName}/api-key/`,
              OPFLOW_BASE_URL: 'https://connect.patsnap.com',
              OPFLOW_QPS: String(stack.config.openPlatform.qps),
              // Per stage, so dev's and prod's metrics never add up in one account.
              POWERTOOLS_SERVICE_NAME: `opflow-${stageName}`,
              POWERTOOLS_METRICS_NAMESPACE: 'opflow',
              POWERTOOLS_LOG_LEVEL: stack.config.logLevel,
              NODE_OPTIONS: '--enable-source-maps',
            },
          },
        });
        expect(resource?.Properties['TracingConfig']).toBeUndefined();
        expect(resource?.Properties['Layers']).toBeUndefined();
      }
    });

    it('take timeouts and memory from config', () => {
      const { stack, template } = stageOf();
      const { worker, api, sweeper } = stack.config;
      template.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: `opflow-${stageName}-step-worker`,
        Timeout: worker.timeoutSeconds,
        MemorySize: worker.memoryMb,
      });
      template.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: `opflow-${stageName}-api`,
        Timeout: api.timeoutSeconds,
        MemorySize: api.memoryMb,
      });
      template.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: `opflow-${stageName}-sweeper`,
        Timeout: sweeper.timeoutSeconds,
        MemorySize: sweeper.memoryMb,
      });
    });

    it('log to their own log groups with the configured retention', () => {
      const { stack, template } = stageOf();
      for (const name of ['step-worker', 'api', 'sweeper']) {
        template.hasResourceProperties('AWS::Logs::LogGroup', {
          LogGroupName: `/aws/lambda/opflow-${stageName}-${name}`,
          RetentionInDays: stack.config.retention.logDays,
        });
      }
    });
  });

  describe('IAM', () => {
    const roles = (stack: OpflowStack) => ({
      worker: logicalId(stack, stack.worker.role),
      api: logicalId(stack, stack.api.role),
      sweeper: logicalId(stack, stack.sweeper.role),
    });

    it('gives the function roles no managed policies and no wildcard actions', () => {
      const { stack, template } = stageOf();
      for (const roleId of Object.values(roles(stack))) {
        const role = resourcesOf(template, 'AWS::IAM::Role')[roleId];
        expect(role?.Properties['ManagedPolicyArns']).toBeUndefined();
        const actions = actionsOf(statementsOfRole(template, roleId));
        expect(actions.filter((a) => a === '*' || a.endsWith(':*'))).toEqual([]);
      }
    });

    it('uses Resource "*" nowhere (tracing is off: no X-Ray actions)', () => {
      const { stack, template } = stageOf();
      for (const roleId of Object.values(roles(stack))) {
        const starred = statementsOfRole(template, roleId).filter((s) => s.Resource === '*');
        expect(actionsOf(starred)).toEqual([]);
      }
    });

    it('lets the worker use the table, read, list and put reports, read the API keys and send work', () => {
      const { stack, template } = stageOf();
      const statements = statementsOfRole(template, roles(stack).worker);
      const actions = actionsOf(statements);
      expect(actions).toEqual(
        expect.arrayContaining([
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          's3:GetObject*',
          's3:List*',
          's3:PutObject',
          'secretsmanager:GetSecretValue',
          'sqs:SendMessage',
          'sqs:ReceiveMessage',
          'sqs:DeleteMessage',
        ]),
      );
      const secretStatement = statements.find((s) =>
        actionsOf([s]).includes('secretsmanager:GetSecretValue'),
      );
      expect(JSON.stringify(secretStatement?.Resource)).toContain(`:secret:opflow-${stageName}/api-key/*`);
      expect(secretStatement?.Action).toBe('secretsmanager:GetSecretValue');
      // s3:ListBucket on the bucket itself: S3 then answers a missing step output 404, not 403.
      const list = statements.find((s) => actionsOf([s]).includes('s3:List*'));
      expect(list?.Resource).toEqual(
        expect.arrayContaining([{ 'Fn::GetAtt': [logicalId(stack, stack.storage.reportBucket), 'Arn'] }]),
      );
      expect(actions.filter((a) => a.startsWith('s3:Delete'))).toEqual([]);
    });

    it('lets the api use the table, send work, get report objects and put only job inputs, batch files and presigned inbox uploads, and no secret', () => {
      const { stack, template } = stageOf();
      const statements = statementsOfRole(template, roles(stack).api);
      const actions = actionsOf(statements);
      expect(actions).toEqual(
        expect.arrayContaining([
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:DeleteItem',
          'dynamodb:Query',
          'sqs:SendMessage',
        ]),
      );
      const bucketArn = { 'Fn::GetAtt': [logicalId(stack, stack.storage.reportBucket), 'Arn'] };
      expect(statements.filter((s) => actionsOf([s]).some((a) => a.startsWith('s3:')))).toEqual([
        // Report objects (presigned links), and the documents a dashboard upload's commit looks up
        // under inbox/ (HeadObject): one statement, as CDK merges them.
        expect.objectContaining({
          Action: 's3:GetObject',
          Resource: [
            { 'Fn::Join': ['', [bucketArn, '/inbox/*']] },
            { 'Fn::Join': ['', [bucketArn, '/reports/*']] },
          ],
        }),
        // A job's input over the inline limit, and the dashboard's manifest upload (a PUT under inbox/ the
        // api presigns and never makes itself): one statement, as CDK merges them.
        expect.objectContaining({
          Action: 's3:PutObject',
          Resource: [
            { 'Fn::Join': ['', [bucketArn, '/inbox/*']] },
            { 'Fn::Join': ['', [bucketArn, '/reports/*/input.json']] },
          ],
        }),
        // The batch routes of the dashboard: a batch's record files and outputs under batches/, listed by
        // that prefix only.
        expect.objectContaining({
          Action: ['s3:GetObject', 's3:PutObject'],
          Resource: { 'Fn::Join': ['', [bucketArn, '/batches/*']] },
        }),
        expect.objectContaining({
          Action: 's3:ListBucket',
          Condition: { StringLike: { 's3:prefix': ['batches/*'] } },
          Resource: bucketArn,
        }),
        // The commit's look-ups: a document not sent yet is a 404, not a 403.
        expect.objectContaining({
          Action: 's3:ListBucket',
          Condition: { StringLike: { 's3:prefix': ['inbox/*'] } },
          Resource: bucketArn,
        }),
      ]);
      // No secret: the webhook signing secrets are the webhooks function's, the API keys the worker's.
      const secretReads = statements.filter((s) =>
        actionsOf([s]).some((a) => a.startsWith('secretsmanager:')),
      );
      expect(secretReads).toEqual([]);
      expect(actions.filter((a) => a.startsWith('s3:Delete'))).toEqual([]);
      expect(actions.filter((a) => a === 'sqs:ReceiveMessage' || a === 'sqs:DeleteMessage')).toEqual([]);
      const puts = statements.filter((s) => actionsOf([s]).includes('s3:PutObject'));
      expect(puts.map((s) => s.Resource)).toEqual([
        [
          {
            'Fn::Join': [
              '',
              [{ 'Fn::GetAtt': [logicalId(stack, stack.storage.reportBucket), 'Arn'] }, '/inbox/*'],
            ],
          },
          {
            'Fn::Join': [
              '',
              [
                { 'Fn::GetAtt': [logicalId(stack, stack.storage.reportBucket), 'Arn'] },
                '/reports/*/input.json',
              ],
            ],
          },
        ],
        {
          'Fn::Join': [
            '',
            [{ 'Fn::GetAtt': [logicalId(stack, stack.storage.reportBucket), 'Arn'] }, '/batches/*'],
          ],
        },
      ]);
    });

    it('lets the sweeper query the due and status indexes, read jobs, commit a re-send (PutItem, no delete), mark due callbacks, read the ingest schedule and send work: no S3, no secrets', () => {
      const { stack, template } = stageOf();
      const statements = statementsOfRole(template, roles(stack).sweeper);
      const tableArn = { 'Fn::GetAtt': [logicalId(stack, stack.storage.table), 'Arn'] };
      expect(statements.filter((s) => actionsOf([s]).some((a) => a.startsWith('dynamodb:')))).toEqual([
        expect.objectContaining({
          Action: 'dynamodb:Query',
          Resource: [
            { 'Fn::Join': ['', [tableArn, '/index/byStatusShard']] },
            { 'Fn::Join': ['', [tableArn, '/index/due']] },
          ],
        }),
        expect.objectContaining({
          Action: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'],
          Resource: tableArn,
        }),
        // The callbacks' pass: the outbox's partition only.
        expect.objectContaining({
          Action: ['dynamodb:Query', 'dynamodb:UpdateItem'],
          Resource: tableArn,
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CBQ'] } },
        }),
        // The ingest pass: the ingest schedule's partition only, read.
        expect.objectContaining({
          Action: 'dynamodb:Query',
          Resource: tableArn,
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['INGESTDUE'] } },
        }),
      ]);
      const actions = actionsOf(statements);
      expect(actions.filter((a) => /^dynamodb:(Delete|BatchWrite)/.test(a))).toEqual([]);
      expect(actions).toContain('sqs:SendMessage');
      expect(actions.filter((a) => a.startsWith('s3:') || a.startsWith('secretsmanager:'))).toEqual([]);
      expect(actions.filter((a) => a === 'sqs:ReceiveMessage')).toEqual([]);
    });
  });

  describe('HTTP API', () => {
    it('declares exactly the aws routes of the route table, each with its auth', () => {
      const { template } = stageOf();
      const routes = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Route'));
      const aws = routesServedBy('aws');
      expect(routes.map((r) => r.Properties['RouteKey']).sort()).toEqual(aws.map(routeKey).sort());
      // A caller's route needs IAM here; the webhook route's signature is checked by the function.
      for (const route of routes) {
        const entry = aws.find((candidate) => routeKey(candidate) === route.Properties['RouteKey'])!;
        expect(route.Properties['AuthorizationType'], routeKey(entry)).toBe(
          entry.auth === 'caller' ? 'AWS_IAM' : 'NONE',
        );
      }
    });

    it('routes the job API to the api function, every route behind IAM authorization', () => {
      const { stack, template } = stageOf();
      // The webhook route has no IAM: its HMAC signature authenticates (test/infra/lib/automation.test.ts).
      const routes = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Route')).filter(
        (r) => r.Properties['RouteKey'] !== 'POST /webhooks/{source}',
      );
      expect(routes.map((r) => r.Properties['RouteKey']).sort()).toEqual(
        JOB_ROUTES.map((r) => `${r.method} ${r.path}`).sort(),
      );
      for (const route of routes) expect(route.Properties['AuthorizationType']).toBe('AWS_IAM');
      template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
        IntegrationType: 'AWS_PROXY',
        IntegrationUri: { 'Fn::GetAtt': [logicalId(stack, stack.api.function), 'Arn'] },
        PayloadFormatVersion: '2.0',
      });
    });

    it('throttles the default stage per config and writes JSON access logs to a log group', () => {
      const { stack, template } = stageOf();
      const [, apiStage] = onlyResource(template, 'AWS::ApiGatewayV2::Stage');
      expect(apiStage.Properties).toMatchObject({
        StageName: '$default',
        AutoDeploy: true,
        DefaultRouteSettings: {
          ThrottlingBurstLimit: stack.config.api.throttle.burstLimit,
          ThrottlingRateLimit: stack.config.api.throttle.rateLimit,
        },
        AccessLogSettings: {
          DestinationArn: { 'Fn::GetAtt': [logicalId(stack, stack.jobApi.accessLogGroup), 'Arn'] },
        },
      });
      const format = JSON.parse(
        (apiStage.Properties['AccessLogSettings'] as { Format: string }).Format,
      ) as Record<string, string>;
      expect(format['requestId']).toBe('$context.requestId');
      expect(format['status']).toBe('$context.status');
      template.hasResourceProperties('AWS::Logs::LogGroup', {
        LogGroupName: `/aws/apigateway/opflow-${stageName}-jobs`,
        RetentionInDays: stack.config.retention.logDays,
      });
    });
  });

  describe('sweeper schedule', () => {
    it('invokes the sweeper every minute', () => {
      const { stack, template } = stageOf();
      template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'rate(1 minute)',
        State: 'ENABLED',
        Targets: [
          Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(stack, stack.sweeper.function), 'Arn'] } }),
        ],
      });
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [logicalId(stack, stack.sweeper.function), 'Arn'] },
      });
    });
  });

  describe('alarms', () => {
    const topicRef = (stack: OpflowStack) => [{ Ref: logicalId(stack, stack.monitoring.topic as never) }];

    it('alarms when any message reaches the dead-letter queue', () => {
      const { stack, template } = stageOf();
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [
          {
            Name: 'QueueName',
            Value: { 'Fn::GetAtt': [logicalId(stack, stack.workQueue.deadLetterQueue), 'QueueName'] },
          },
        ],
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        AlarmActions: topicRef(stack),
      });
    });

    it('alarms when the oldest work message is too old', () => {
      const { stack, template } = stageOf();
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [
          {
            Name: 'QueueName',
            Value: { 'Fn::GetAtt': [logicalId(stack, stack.workQueue.queue), 'QueueName'] },
          },
        ],
        Threshold: stack.config.alarms.oldestMessageAgeSeconds,
        AlarmActions: topicRef(stack),
      });
    });

    it("alarms on errors of each function and once on the account's Lambda throttles", () => {
      const { stack, template } = stageOf();
      for (const fn of [stack.worker, stack.api, stack.sweeper]) {
        template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          Namespace: 'AWS/Lambda',
          MetricName: 'Errors',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(stack, fn.function) } }],
          Threshold: 0,
          ComparisonOperator: 'GreaterThanThreshold',
          AlarmActions: topicRef(stack),
        });
      }
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `opflow-${stageName}-lambda-throttles`,
        Namespace: 'AWS/Lambda',
        MetricName: 'Throttles',
        Dimensions: Match.absent(),
        Threshold: 0,
        AlarmActions: topicRef(stack),
      });
    });

    it('alarms on the failed-job rate computed from JobFailed and JobSucceeded', () => {
      const { stack, template } = stageOf();
      const alarms = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).filter((a) =>
        String(a.Properties['AlarmName'] ?? '').endsWith('failed-job-rate'),
      );
      expect(alarms).toHaveLength(1);
      const alarm = alarms[0]!;
      expect(alarm.Properties['Threshold']).toBe(stack.config.alarms.failedJobRatePercent);
      expect(alarm.Properties['AlarmActions']).toEqual(topicRef(stack));
      const metrics = alarm.Properties['Metrics'] as {
        Expression?: string;
        MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown } };
      }[];
      const expression = metrics.find((m) => m.Expression)?.Expression ?? '';
      // FILL: with failures and no success in a window, JobSucceeded has no data point there.
      expect(expression).toBe(
        `IF(FILL(succeeded, 0) + FILL(failed, 0) >= ${stack.config.alarms.failedJobRateMinJobs}, ` +
          '100 * FILL(failed, 0) / (FILL(succeeded, 0) + FILL(failed, 0)), 0)',
      );
      const stats = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
      expect(stats.map((m) => m.MetricName).sort()).toEqual(['JobFailed', 'JobSucceeded']);
      for (const metric of stats) {
        expect(metric.Namespace).toBe('opflow');
        expect(metric.Dimensions).toEqual([{ Name: 'service', Value: `opflow-${stageName}` }]);
      }
    });

    it('alarms when DynamoDB throttles reads or writes of the job table', () => {
      const { stack, template } = stageOf();
      const [alarm] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).filter((a) =>
        String(a.Properties['AlarmName'] ?? '').endsWith('table-throttles'),
      );
      expect(alarm).toBeDefined();
      expect(alarm!.Properties['Threshold']).toBe(0);
      const metrics = alarm!.Properties['Metrics'] as {
        MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string }[] } };
      }[];
      const stats = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
      expect(new Set(stats.map((m) => m.Namespace))).toEqual(new Set(['AWS/DynamoDB']));
      // The table's series only: an index's write throttles would be a metric (and $0.10 a month) each.
      expect(stats.map((m) => m.MetricName).sort()).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);
      for (const metric of stats) expect(metric.Dimensions.map((d) => d.Name)).toEqual(['TableName']);
      expect(alarm!.Properties['AlarmActions']).toEqual(topicRef(stack));
    });

    it('sends every alarm, and its recovery, to the alarm topic', () => {
      const { stack, template } = stageOf();
      const alarms = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm'));
      // work queue 2, errors of 6 functions (no schedules here; events through its DLQ), account
      // throttles, failed-job rate, table throttles, ingest dead letters, events dead letters
      expect(alarms).toHaveLength(2 + 6 + 1 + 1 + 1 + 1 + 1);
      for (const alarm of alarms) {
        expect(alarm.Properties['AlarmActions']).toEqual(topicRef(stack));
        expect(alarm.Properties['OKActions']).toEqual(topicRef(stack));
      }
    });
  });

  describe('dashboard', () => {
    it('shows the queue, the functions and every pipeline metric', () => {
      const { template } = stageOf();
      const [, dashboard] = onlyResource(template, 'AWS::CloudWatch::Dashboard');
      expect(dashboard.Properties['DashboardName']).toBe(`opflow-${stageName}`);
      const body = JSON.stringify(dashboard.Properties['DashboardBody']);
      for (const metric of [
        'ApproximateNumberOfMessagesVisible',
        'ApproximateAgeOfOldestMessage',
        'Invocations',
        'Errors',
        'Duration',
        ...PIPELINE_METRICS.names,
      ]) {
        expect(body).toContain(`\\"${metric}\\"`);
      }
    });
  });

  describe('outputs', () => {
    it('exports the API URL, table, queue, bucket and secret prefix', () => {
      const { stack, template } = stageOf();
      template.hasOutput('ApiUrl', {});
      template.hasOutput('TableName', { Value: { Ref: logicalId(stack, stack.storage.table) } });
      template.hasOutput('QueueUrl', { Value: { Ref: logicalId(stack, stack.workQueue.queue) } });
      template.hasOutput('BucketName', { Value: { Ref: logicalId(stack, stack.storage.reportBucket) } });
    });
  });
});

describe('removal policies per stage', () => {
  it('dev destroys the table, buckets, secrets and logs with the stack, without deletion protection', () => {
    const { template } = dev;
    const [, table] = onlyResource(template, 'AWS::DynamoDB::Table');
    expect(table.DeletionPolicy).toBe('Delete');
    expect(table.Properties['DeletionProtectionEnabled']).toBe(false);
    for (const type of ['AWS::S3::Bucket', 'AWS::SecretsManager::Secret', 'AWS::Logs::LogGroup']) {
      for (const resource of Object.values(resourcesOf(template, type)))
        expect(resource.DeletionPolicy).toBe('Delete');
    }
    // Versioned buckets cannot be deleted while they hold objects: dev empties them on delete.
    expect(Object.keys(template.findResources('Custom::S3AutoDeleteObjects'))).toHaveLength(2);
  });

  it('prod retains the table, buckets, secrets and logs, and protects the table from deletion', () => {
    const { template } = prod;
    const [, table] = onlyResource(template, 'AWS::DynamoDB::Table');
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties['DeletionProtectionEnabled']).toBe(true);
    for (const type of ['AWS::S3::Bucket', 'AWS::SecretsManager::Secret', 'AWS::Logs::LogGroup']) {
      for (const resource of Object.values(resourcesOf(template, type)))
        expect(resource.DeletionPolicy).toBe('Retain');
    }
    expect(Object.keys(template.findResources('Custom::S3AutoDeleteObjects'))).toHaveLength(0);
  });
});
