/**
 * The stack against the runtime it deploys, both read from the code rather than restated:
 * - every function's environment is what the runtime's loadAwsConfig reads, and nothing else;
 * - the job table as the template declares it (keys, indexes, projections, TTL) is the table the
 *   backend's createJobTable makes, and serves every query of DynamoDbJobStore (on DynamoDB Local);
 * - each role allows every AWS call its function's code makes: the real api router, step runner and
 *   sweeper, the webhook route and the schedules function's slot run on emulators through SDK clients that record their calls, and each call's IAM
 *   permission is looked up in that function's statements in the template;
 * - the pipeline metrics the runtime emits (Powertools EMF) are the ones the alarms and dashboard watch.
 * Functions are not bundled here (only the template is read).
 */

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  PutItemCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import type { CfnElement } from 'aws-cdk-lib';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import type { OpflowStack } from '../../../infra/lib/opflow-stack';
import { PIPELINE_METRICS } from '../../../infra/lib/pipeline-monitoring';
import { type AwsEmulators, startAwsEmulators, uniqueName } from '../../../scripts/emulators/aws-emulators';
import { createJobTable } from '../../../shared/backends/aws';
import { DynamoDbCallbackOutbox } from '../../../shared/backends/aws/dynamodb-callback-outbox';
import { DynamoDbScheduleStateStore } from '../../../shared/backends/aws/dynamodb-schedule-state-store';
import { DynamoDbWebhookDeliveries } from '../../../shared/backends/aws/dynamodb-webhook-deliveries';
import { ingestVariables } from '../../../shared/backends/aws/ingest-variables';
import {
  reviewerSecretNames,
  SecretsManagerReviewerSecrets,
} from '../../../shared/backends/aws/secrets-manager-reviewer-secrets';
import { opflowConfigSchema } from '../../../shared/config/opflow-config';
import type { EngineDeps } from '../../../shared/engine/deps';
import type { Job } from '../../../shared/engine/job-record';
import { runStep } from '../../../shared/engine/runner';
import { sweep } from '../../../shared/engine/sweep';
import type { Workflow } from '../../../shared/engine/workflow';
import { handleJobApiRequest, type JobApiRequest } from '../../../shared/http/job-api';
import { createWebhookHandler } from '../../../shared/http/webhooks';
import type { OpenPlatformClient } from '../../../shared/openplatform/types';
import { signReviewLink } from '../../../shared/reviewers/review-link';
import { reviewSecretPrefixVariable } from '../../../shared/reviewers/reviewer-secrets';
import {
  type AwsPipeline,
  awsConfigSources,
  buildAwsPipeline,
  loadAwsConfig,
} from '../../../shared/runtime/aws/pipeline';
import { API_AUTH_VARIABLE } from '../../../shared/runtime/lambda/api-auth';
import { automationVariables } from '../../../shared/runtime/lambda/automation';
import {
  createObservability,
  engineMetrics,
  pipelineMetricNames,
  usageMetrics,
} from '../../../shared/runtime/lambda/observability';
import { awsReviewPage } from '../../../shared/runtime/lambda/reviewers';
import { sweepReviews } from '../../../shared/runtime/lambda/sweep-reviews';
import { handleScheduledSlot } from '../../../shared/schedules/target';
import { makeJob } from '../../support/factories';
import { reviewFormOf } from '../../support/review-form';
import { demo } from '../../unit/engine/fixtures';
import { automationConfigPut } from '../support/automation-config-item';
import {
  allowStatementsOfRole,
  allows,
  createCallRecorder,
  permissionsOf,
  type RecordedCall,
  type ResourceNames,
} from '../support/recorded-aws-calls';
import { opflowConfigWithOneSchedule, type SynthesizedStage, synthStage } from '../support/synth-stage';

type Resource = { Type: string; Properties: Record<string, unknown> };

let dev: SynthesizedStage;
let prod: SynthesizedStage;
/** DynamoDB Local, fauxqs (SQS and S3) and the Secrets Manager emulator, shared by every test here. */
let emulators: AwsEmulators;

beforeAll(async () => {
  // One schedule, so the template holds the schedules function and its role too.
  const opflowConfig = opflowConfigWithOneSchedule();
  dev = synthStage({ stage: 'dev', opflowConfig }, { bundle: false });
  prod = synthStage({ stage: 'prod', opflowConfig }, { bundle: false });
  emulators = await startAwsEmulators();
});

afterAll(async () => {
  await emulators?.stop();
});

const stages = [
  ['dev', () => dev],
  ['prod', () => prod],
] as const;

const logicalId = (stack: OpflowStack, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

const resourcesOf = (stage: SynthesizedStage) =>
  stage.template.toJSON()['Resources'] as Record<string, Resource>;

/** A function's environment variables as the template writes them. */
function environmentOf(stage: SynthesizedStage, fn: 'worker' | 'api' | 'sweeper'): Record<string, unknown> {
  const resource = resourcesOf(stage)[logicalId(stage.stack, stage.stack[fn].function)];
  if (!resource) throw new Error(`no ${fn} function in the template`);
  return (resource.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
}

/** The environment with each resource Ref replaced by a physical name from `physical` (by logical id). */
function resolvedEnvironment(
  variables: Record<string, unknown>,
  physical: Record<string, string>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => {
      if (typeof value === 'string') return [name, value];
      const ref = (value as { Ref?: string }).Ref;
      const resolved = ref === undefined ? undefined : physical[ref];
      if (resolved === undefined)
        throw new Error(`${name} is ${JSON.stringify(value)}, not a Ref to a known resource`);
      return [name, resolved];
    }),
  );
}

describe.each(stages)('the %s functions and the runtime configuration', (_stage, stageOf) => {
  it('set every variable loadAwsConfig requires, and only variables the runtime reads', () => {
    const stage = stageOf();
    const runtimeVariables = new Set<string>([
      ...Object.values(awsConfigSources),
      ...automationVariables,
      API_AUTH_VARIABLE,
      ingestVariables.functionName,
    ]);
    for (const fn of ['worker', 'api', 'sweeper'] as const) {
      const variables = environmentOf(stage, fn);
      const opflowVariables = Object.keys(variables).filter((name) => name.startsWith('OPFLOW_'));
      expect(
        opflowVariables.filter((name) => !runtimeVariables.has(name)),
        `${fn}: unread variables`,
      ).toEqual([]);
      for (const required of ['tableName', 'queueUrl', 'bucketName', 'apiKeySecretPrefix'] as const) {
        expect(variables[awsConfigSources[required]], `${fn}: ${awsConfigSources[required]}`).toBeDefined();
      }
    }
  });

  it('point the runtime at this stack: loadAwsConfig accepts the environment as deployed', () => {
    const stage = stageOf();
    const { stack } = stage;
    const tableName = `${stack.config.names.resourcePrefix}-jobs`;
    const queueUrl = `https://sqs.eu-west-1.amazonaws.com/123456789012/${stack.config.names.resourcePrefix}-work`;
    const physical = {
      [logicalId(stack, stack.storage.table)]: tableName,
      [logicalId(stack, stack.workQueue.queue)]: queueUrl,
      [logicalId(stack, stack.storage.reportBucket)]: 'the-report-bucket',
      [logicalId(stack, stack.inbox.ingest.function)]: `${stack.config.names.resourcePrefix}-ingest`,
    };
    for (const fn of ['worker', 'api', 'sweeper'] as const) {
      // Lambda sets AWS_REGION itself, and credentials come from the role.
      const env = { ...resolvedEnvironment(environmentOf(stage, fn), physical), AWS_REGION: 'eu-west-1' };
      const config = loadAwsConfig(env);
      expect(config).toMatchObject({
        tableName,
        queueUrl,
        bucketName: 'the-report-bucket',
        apiKeySecretPrefix: stack.secrets.apiKeySecretPrefix,
        baseUrl: stack.config.openPlatform.baseUrl,
        qps: stack.config.openPlatform.qps,
        region: 'eu-west-1',
      });
      expect(config.endpointUrl).toBeUndefined();
      expect(config.endpoints).toBeUndefined();
      expect(config.credentials).toBeUndefined();
    }
  });
});

describe.each(stages)('the %s pipeline metrics', (_stage, stageOf) => {
  /** The EMF lines Powertools writes to stdout while `work` runs, parsed. */
  function emittedMetrics(
    env: Record<string, string>,
    work: (observability: ReturnType<typeof createObservability>) => void,
  ) {
    const lines: string[] = [];
    const saved = { ...process.env };
    Object.assign(process.env, env);
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const observability = createObservability();
      work(observability);
      observability.metrics.publishStoredMetrics();
    } finally {
      write.mockRestore();
      for (const name of Object.keys(env)) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
    return lines
      .flatMap((line) => line.split('\n'))
      .filter((line) => line.includes('"_aws"'))
      .map(
        (line) =>
          JSON.parse(line) as {
            _aws: {
              CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
            };
          } & Record<string, unknown>,
      );
  }

  /** Every metric the runtime emits with the worker's environment: namespace, name and dimensions. */
  function workerMetrics(stage: SynthesizedStage) {
    const variables = environmentOf(stage, 'worker');
    const env = Object.fromEntries(
      Object.entries(variables).filter(([name]) => name.startsWith('POWERTOOLS_')),
    ) as Record<string, string>;
    const documents = emittedMetrics(env, ({ metrics }) => {
      const counters = engineMetrics(metrics);
      for (const name of ['StepsRun', 'Retries', 'JobSucceeded', 'JobFailed'])
        counters.count(name, 1, { workflow: 'w' });
      usageMetrics(metrics)({ operationId: 'op', durationMs: 5, billedUnits: 3, ok: true });
    });
    return documents.flatMap((document) =>
      document._aws.CloudWatchMetrics.flatMap((directive) =>
        directive.Metrics.map((metric) => ({
          namespace: directive.Namespace,
          name: metric.Name,
          dimensions: Object.fromEntries(
            directive.Dimensions.flat().map((dimension) => [dimension, String(document[dimension])]),
          ),
        })),
      ),
    );
  }

  it('are the names the stack watches', () => {
    expect([...PIPELINE_METRICS.names].sort()).toEqual([...pipelineMetricNames].sort());
    expect(
      workerMetrics(stageOf())
        .map((metric) => metric.name)
        .sort(),
    ).toEqual([...PIPELINE_METRICS.names].sort());
  });

  it('carry the namespace and the one dimension the failed-job alarm reads, with this stage as service', () => {
    const stage = stageOf();
    const emitted = workerMetrics(stage);
    const alarm = Object.values(resourcesOf(stage)).find(
      (resource) =>
        resource.Type === 'AWS::CloudWatch::Alarm' &&
        String(resource.Properties['AlarmName'] ?? '').endsWith('failed-job-rate'),
    );
    if (!alarm) throw new Error('no failed-job rate alarm in the template');
    const watched = (alarm.Properties['Metrics'] as { MetricStat?: { Metric: Record<string, unknown> } }[])
      .flatMap((query) => (query.MetricStat ? [query.MetricStat.Metric] : []))
      .map((metric) => ({
        namespace: metric['Namespace'],
        name: metric['MetricName'],
        dimensions: Object.fromEntries(
          (metric['Dimensions'] as { Name: string; Value: string }[]).map((d) => [d.Name, d.Value]),
        ),
      }));
    expect(watched).toHaveLength(2);
    for (const metric of watched) expect(emitted).toContainEqual(metric);
    expect(watched[0]?.dimensions).toEqual({ service: stage.stack.config.names.resourcePrefix });
  });

  it('are drawn on the dashboard as they are emitted', () => {
    const stage = stageOf();
    const dashboard = Object.values(resourcesOf(stage)).find((r) => r.Type === 'AWS::CloudWatch::Dashboard');
    const body = JSON.parse(renderDashboardBody(dashboard?.Properties['DashboardBody'])) as {
      widgets: { properties: { metrics?: unknown[][] } }[];
    };
    const drawn = body.widgets
      .flatMap((widget) => widget.properties.metrics ?? [])
      .filter((metric) => metric[0] === PIPELINE_METRICS.namespace)
      .map((metric) => ({
        namespace: metric[0],
        name: metric[1],
        dimensions: { [String(metric[2])]: metric[3] },
      }));
    expect(drawn.map((metric) => metric.name).sort()).toEqual([...PIPELINE_METRICS.names].sort());
    const emitted = workerMetrics(stage);
    for (const metric of drawn) expect(emitted).toContainEqual(metric);
  });
});

/** The dashboard body (a Fn::Join of strings and tokens) as JSON text, tokens as placeholders. */
function renderDashboardBody(body: unknown): string {
  if (typeof body === 'string') return body;
  const [, parts] = (body as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  return parts.map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('');
}

describe('the job table on DynamoDB Local', () => {
  it('is created from the template exactly as createJobTable creates it', async () => {
    const fromTemplate = await createTableFromTemplate(dev);
    const fromBackend = uniqueName('jobs');
    await createJobTable(emulators.clients.dynamoDb, fromBackend);
    const describe = async (name: string) => {
      const { Table } = await emulators.clients.dynamoDb.send(new DescribeTableCommand({ TableName: name }));
      const ttl = await emulators.clients.dynamoDb.send(new DescribeTimeToLiveCommand({ TableName: name }));
      return {
        keys: Table?.KeySchema,
        attributes: [...(Table?.AttributeDefinitions ?? [])].sort((a, b) =>
          String(a.AttributeName).localeCompare(String(b.AttributeName)),
        ),
        indexes: [...(Table?.GlobalSecondaryIndexes ?? [])]
          .map((index) => ({ name: index.IndexName, keys: index.KeySchema, projection: index.Projection }))
          .sort((a, b) => String(a.name).localeCompare(String(b.name))),
        billing: Table?.BillingModeSummary?.BillingMode,
        ttl: ttl.TimeToLiveDescription?.AttributeName,
      };
    };
    expect(await describe(fromTemplate)).toEqual(await describe(fromBackend));
  });
});

/** Creates the job table on DynamoDB Local from the template's own properties; returns its name. */
async function createTableFromTemplate(stage: SynthesizedStage): Promise<string> {
  const table = resourcesOf(stage)[logicalId(stage.stack, stage.stack.storage.table)];
  const properties = table?.Properties as {
    KeySchema: never;
    AttributeDefinitions: never;
    GlobalSecondaryIndexes: never;
    BillingMode: never;
    TimeToLiveSpecification: { AttributeName: string; Enabled: boolean };
  };
  const name = uniqueName('stack-jobs');
  await emulators.clients.dynamoDb.send(
    new CreateTableCommand({
      TableName: name,
      KeySchema: properties.KeySchema,
      AttributeDefinitions: properties.AttributeDefinitions,
      GlobalSecondaryIndexes: properties.GlobalSecondaryIndexes,
      BillingMode: properties.BillingMode,
    }),
  );
  await emulators.clients.dynamoDb.send(
    new UpdateTimeToLiveCommand({
      TableName: name,
      TimeToLiveSpecification: properties.TimeToLiveSpecification,
    }),
  );
  return name;
}

/** A one-step workflow: download a document the input names, after reading an earlier output that is absent. */
const downloadWorkflow = {
  name: 'download-a-document',
  version: 1,
  description: 'downloads one document',
  input: z.object({ url: z.url(), notes: z.string() }),
  steps: [
    {
      kind: 'fetch',
      name: 'download',
      needs: [{ name: 'earlier' }],
      url: (ctx: { input: { url: string } }) => ctx.input.url,
      decide: () => ({ type: 'complete' }),
    },
  ],
  report: () => ({ title: 'a document', markdown: 'downloaded' }),
} as unknown as Workflow;

/** An Open Platform client that serves one document and refuses anything else. */
const documentClient = {
  fetchDocument: async (url: string) => ({
    body: new TextEncoder().encode('%PDF-1.7 a document'),
    contentType: 'application/pdf',
    fileName: 'document.pdf',
    usage: {
      operationId: 'fetch',
      durationMs: 1,
      billedUnits: 0,
      ok: true,
      httpStatus: 200,
      correlationId: url,
    },
  }),
  call: async () => {
    throw new Error('this test client only fetches documents');
  },
  stream: async () => {
    throw new Error('this test client only fetches documents');
  },
  close: async () => undefined,
} as unknown as OpenPlatformClient;

describe.each(stages)(
  'the %s roles against the calls their functions make (emulators)',
  (_stage, stageOf) => {
    let pipeline: AwsPipeline;
    let deps: EngineDeps;
    let names: ResourceNames;
    let recorder: ReturnType<typeof createCallRecorder>;
    let now = Date.UTC(2030, 0, 15, 12, 0, 0);

    beforeAll(async () => {
      const stage = stageOf();
      const { stack } = stage;
      const tableName = await createTableFromTemplate(stage);
      const { queueUrl } = emulators.createQueue();
      const bucketName = emulators.createBucket();
      names = {
        table: { name: tableName, logicalId: logicalId(stack, stack.storage.table) },
        queue: { url: queueUrl, logicalId: logicalId(stack, stack.workQueue.queue) },
        bucket: { name: bucketName, logicalId: logicalId(stack, stack.storage.reportBucket) },
      };
      emulators.secretsManager?.setSecret(`${stack.secrets.apiKeySecretPrefix}default`, 'sk-test-key');
      const endpoints = emulators.clientConfig.endpoints ?? {};
      const env = {
        // Every function has the same environment; the worker's stands for all three.
        ...resolvedEnvironment(environmentOf(stage, 'worker'), {
          [names.table.logicalId]: tableName,
          [names.queue.logicalId]: queueUrl,
          [names.bucket.logicalId]: bucketName,
          // The ingest function the worker wakes when a job of a batch ends.
          [logicalId(stack, stack.inbox.ingest.function)]: `${stack.config.names.resourcePrefix}-ingest`,
        }),
        AWS_REGION: emulators.region,
        AWS_ENDPOINT_URL_DYNAMODB: String(endpoints.dynamodb),
        AWS_ENDPOINT_URL_SQS: String(endpoints.sqs),
        AWS_ENDPOINT_URL_S3: String(endpoints.s3),
        AWS_ENDPOINT_URL_SECRETS_MANAGER: String(endpoints.secretsManager),
      };
      recorder = createCallRecorder();
      pipeline = buildAwsPipeline({
        env,
        workflows: new Map([[downloadWorkflow.name, downloadWorkflow]]),
        client: documentClient,
        clock: { now: () => now },
        random: () => 0.5,
        instrumentAwsClient: recorder.instrument,
      });
      deps = pipeline.deps;
    });

    afterAll(async () => {
      await pipeline?.close();
    });

    /** Permissions of the calls recorded so far, each with whether `fn`'s role allows it. */
    function checkAgainstRole(
      fn: 'worker' | 'api' | 'sweeper' | 'webhooks' | 'schedules',
      calls: RecordedCall[],
    ) {
      const stage = stageOf();
      const { automation } = stage.stack;
      const role =
        fn === 'webhooks'
          ? automation.webhookReceiver.role
          : fn === 'schedules'
            ? automation.scheduleTarget?.role
            : stage.stack[fn].role;
      if (!role) throw new Error(`no ${fn} function in the template`);
      const statements = allowStatementsOfRole(resourcesOf(stage), logicalId(stage.stack, role));
      const needed = calls.flatMap((call) => permissionsOf(call, names));
      const denied = needed.filter((permission) => !allows(statements, permission));
      return { needed, denied };
    }

    const api = (request: JobApiRequest) => handleJobApiRequest(request, { deps });
    const jobs: { large?: Job; cancelled?: Job; later?: Job } = {};

    it('lets the api function do what the job API does', async () => {
      recorder.take();
      const create = (body: object, key?: string) =>
        api({
          method: 'POST',
          path: '/jobs',
          headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
          body: JSON.stringify(body),
        });
      // An input over the inline limit goes to S3 as reports/<id>/input.json; an idempotency key makes the
      // create one transaction, and asking again finds the job by its key.
      const large = {
        workflow: downloadWorkflow.name,
        batchId: 'batch-1',
        input: { url: 'https://example.com/a.pdf', notes: 'x'.repeat(40_000) },
      };
      const first = await create(large, 'key-1');
      expect(first.status).toBe(201);
      expect((await create(large, 'key-1')).status).toBe(200);
      jobs.large = (JSON.parse(first.body) as { job: Job }).job;
      const second = await create({
        workflow: downloadWorkflow.name,
        input: { url: 'https://example.com/b.pdf', notes: '' },
      });
      jobs.cancelled = (JSON.parse(second.body) as { job: Job }).job;
      const third = await create({
        workflow: downloadWorkflow.name,
        input: { url: 'https://example.com/c.pdf', notes: '' },
      });
      jobs.later = (JSON.parse(third.body) as { job: Job }).job;

      for (const request of [
        { method: 'GET', path: '/jobs' },
        { method: 'GET', path: '/jobs', query: { status: 'QUEUED', tenant: 'default' } },
        { method: 'GET', path: '/jobs', query: { batchId: 'batch-1' } },
        { method: 'GET', path: `/jobs/${jobs.large.id}` },
        { method: 'POST', path: `/jobs/${jobs.cancelled.id}/cancel` },
      ]) {
        expect((await api(request)).status, `${request.method} ${request.path}`).toBe(200);
      }
      const listed = JSON.parse(
        (await api({ method: 'GET', path: '/jobs', query: { batchId: 'batch-1' } })).body,
      ) as { jobs: Job[] };
      expect(listed.jobs.map((job) => job.id)).toEqual([jobs.large.id]);

      const calls = recorder.take();
      expect(calls.map((call) => call.command)).toEqual(
        expect.arrayContaining([
          'GetItem',
          'PutObject',
          'TransactWriteItems',
          'SendMessage',
          'Query',
          'PutItem',
        ]),
      );
      const { needed, denied } = checkAgainstRole('api', calls);
      expect(needed.map((p) => p.resource)).toContainEqual(
        `<${names.table.logicalId}.Arn>/index/byStatusShard`,
      );
      expect(needed.map((p) => p.resource)).toContainEqual(
        `<${names.table.logicalId}.Arn>/index/byBatchKeys`,
      );
      expect(denied).toEqual([]);
    });

    it('lets the webhooks function do what a delivery does: a signed one, its replay, a bad signature, the day cap', async () => {
      recorder.take();
      const secret = `whsec_${Buffer.from('w'.repeat(32)).toString('base64')}`;
      const answer = createWebhookHandler({
        deps,
        config: opflowConfigSchema.parse({ webhooks: { tracker: { maxUnitsPerDay: 1000 } } }),
        // The secret's read is Secrets Manager's (checked below); here the calls a delivery makes of the table and queues.
        secrets: { get: async () => secret, refresh: async () => secret },
        deliveries: new DynamoDbWebhookDeliveries({
          client: pipeline.aws.clients.documents,
          tableName: pipeline.config.tableName,
        }),
      });
      const body = Buffer.from(
        JSON.stringify({
          workflow: downloadWorkflow.name,
          input: { url: 'https://example.com/hook.pdf', notes: 'y'.repeat(40_000) },
        }),
      );
      const at = new Date(now);
      const signed = (signature: string) => ({
        source: 'tracker',
        headers: {
          'webhook-id': 'msg_1',
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
      });
      const good = new Webhook(secret).sign('msg_1', at, body.toString('utf8'));
      expect((await answer(signed(good))).status).toBe(202);
      expect((await answer(signed(good))).status).toBe(202);
      expect((await answer(signed('v1,bm90IGl0'))).status).toBe(401);
      const calls = recorder.take();
      expect(calls.map((call) => call.command)).toEqual(
        expect.arrayContaining(['PutObject', 'TransactWriteItems', 'SendMessage', 'Query', 'PutItem']),
      );
      const { needed, denied } = checkAgainstRole('webhooks', calls);
      expect(needed.map((p) => p.resource)).toContainEqual(
        `<${names.table.logicalId}.Arn>/index/byStatusShard`,
      );
      expect(denied).toEqual([]);
    });

    it('lets the schedules function do what a slot does: its cost caps, a large input, the slot delivered again', async () => {
      recorder.take();
      const [schedule] = opflowConfigSchema.parse({
        schedules: [
          {
            name: 'nightly',
            cron: '0 6 * * *',
            workflow: downloadWorkflow.name,
            input: { url: 'https://example.com/nightly.pdf', notes: 'z'.repeat(40_000) },
            maxUnitsPerDay: 1000,
            maxUnitsPerRun: 100,
          },
        ],
      }).schedules;
      if (!schedule) throw new Error('no schedule parsed');
      const states = new DynamoDbScheduleStateStore(
        pipeline.aws.clients.documents,
        pipeline.config.tableName,
      );
      const slot = Date.UTC(2030, 0, 15, 6, 0, 0);
      // The day cap reads the tenant's jobs of the last 24 hours; the input goes to S3; EventBridge
      // Scheduler delivers at least once, so the same slot comes again and finds its job (input read back).
      const first = await handleScheduledSlot(deps, states, schedule, slot);
      expect(first).toMatchObject([{ outcome: 'fired', created: true }]);
      const again = await handleScheduledSlot(deps, states, schedule, slot);
      expect(again).toMatchObject([
        { outcome: 'fired', created: false, jobId: (first[0] as { jobId?: string }).jobId },
      ]);
      const calls = recorder.take();
      expect(calls.map((call) => call.command)).toEqual(
        expect.arrayContaining(['Query', 'PutObject', 'GetObject', 'TransactWriteItems', 'SendMessage']),
      );
      const { needed, denied } = checkAgainstRole('schedules', calls);
      expect(needed.map((p) => p.resource)).toContainEqual(
        `<${names.table.logicalId}.Arn>/index/byStatusShard`,
      );
      expect(denied).toEqual([]);
    });

    it('lets the step worker do what a step does', async () => {
      const job = jobs.large as Job;
      recorder.take();
      now += 1_000;
      // The job's input is in S3, the output it needs is absent (S3 says 404 only to a role that may list
      // the bucket), the document is stored, the report written, the job committed.
      const report = await runStep(deps, { jobId: job.id, version: job.version });
      expect(report).toMatchObject({ outcome: 'committed', job: { status: 'SUCCEEDED' } });
      // A message that arrives early is sent again, delayed (3 s early: more than the runner's early
      // tolerance, less than the clock skew it re-bases a job for).
      const later = jobs.later as Job;
      now -= 4_000;
      expect(await runStep(deps, { jobId: later.id, version: later.version })).toMatchObject({
        outcome: 'deferred',
      });
      now += 4_000;
      // Before a call: a token from the shared rate bucket; after a 429, the bucket slows down; after a 401, the key again.
      await deps.rateLimiter.take('0123456789abcdef', now);
      await deps.rateLimiter.throttled('0123456789abcdef', now);
      await deps.keys.refresh('default');

      const calls = recorder.take();
      expect(calls.filter((call) => call.command === 'GetObject' && call.error === 'NoSuchKey')).toHaveLength(
        1,
      );
      expect(calls.map((call) => call.command)).toEqual(
        expect.arrayContaining([
          'GetItem',
          'GetSecretValue',
          'GetObject',
          'PutObject',
          'PutItem',
          'SendMessage',
        ]),
      );
      const { denied } = checkAgainstRole('worker', calls);
      expect(denied).toEqual([]);
    });

    it('lets the api function presign report links', async () => {
      const job = jobs.large as Job;
      recorder.take();
      const answer = await api({ method: 'GET', path: `/jobs/${job.id}/report` });
      expect(answer.status).toBe(200);
      const calls = recorder.take();
      expect(calls.map((call) => call.command)).toContain('GetObject');
      const { denied } = checkAgainstRole('api', calls);
      expect(denied).toEqual([]);
    });

    it("lets the sweeper do what a sweep does: read due jobs and re-send them, mark due callbacks; its other write is the nudge's unpark", async () => {
      // The sweeper's outbox, as sweeper-runtime.ts builds it; an entry that came due.
      const outbox = new DynamoDbCallbackOutbox(pipeline.aws.clients.documents, pipeline.config.tableName);
      await outbox.add('01JCALLBACKDUE0000000000000', now);
      recorder.take();
      now += 120_000;
      const result = await sweep(deps);
      expect(result.requeued).toBeGreaterThanOrEqual(1);
      expect(await outbox.announceDue(now)).toBe(1);
      const calls = recorder.take();
      expect([...new Set(calls.map((call) => call.command))].sort()).toEqual([
        'BatchGetItem',
        'Query',
        'SendMessageBatch',
        'UpdateItem',
      ]);
      const { needed, denied } = checkAgainstRole('sweeper', calls);
      expect(denied).toEqual([]);
      const stage = stageOf();
      const granted = allowStatementsOfRole(
        resourcesOf(stage),
        logicalId(stage.stack, stage.stack.sweeper.role),
      )
        .flatMap((statement) => statement.actions)
        .filter((action) => action.startsWith('dynamodb:'));
      // Its role holds no more than those calls need, plus the PutItem of the nudge, which unparks
      // the parked jobs of a key gone idle by a conditional commit (shared/engine/admission/nudge.ts).
      expect([...new Set(granted)].sort()).toEqual(
        [
          ...new Set([
            ...needed.map((p) => p.action).filter((a) => a.startsWith('dynamodb:')),
            'dynamodb:PutItem',
          ]),
        ].sort(),
      );
    });

    it('never lets a function read a secret the runtime does not read', () => {
      const stage = stageOf();
      const { stack } = stage;
      const callbackSecrets = [...stack.automation.callbackSecrets.values()].map((secret) =>
        logicalId(stack, secret),
      );
      const reads = (fn: 'worker' | 'api' | 'sweeper') => {
        const statements = allowStatementsOfRole(resourcesOf(stage), logicalId(stack, stack[fn].role));
        return statements.filter((s) => s.actions.some((a) => a.startsWith('secretsmanager:')));
      };
      for (const fn of ['worker', 'api', 'sweeper'] as const) {
        const secretActions = reads(fn);
        // Only the callback sender signs callbacks: no other function may read a tenant's signing key.
        expect(
          secretActions
            .flatMap((s) => s.resources)
            .filter((r) => callbackSecrets.some((id) => r.includes(id))),
        ).toEqual([]);
        expect(JSON.stringify(secretActions.flatMap((s) => s.resources))).not.toContain('callback-signing');
        expect(
          secretActions.flatMap((s) => s.actions).filter((a) => a !== 'secretsmanager:GetSecretValue'),
        ).toEqual([]);
      }
      // The webhook secrets are the webhooks function's alone: no other function reads them.
      for (const fn of ['worker', 'api', 'sweeper'] as const)
        expect(JSON.stringify(reads(fn).flatMap((s) => s.resources))).not.toContain('/webhook/');
      const webhookReads = allowStatementsOfRole(
        resourcesOf(stage),
        logicalId(stack, stack.automation.webhookReceiver.role),
      ).filter((s) => s.actions.some((a) => a.startsWith('secretsmanager:')));
      expect(JSON.stringify(webhookReads.flatMap((s) => s.resources))).toContain('/webhook/');
      expect(JSON.stringify(webhookReads.flatMap((s) => s.resources))).not.toContain('callback-signing');
    });
  },
);

/** An opflow.config.json with one reviewers' rule: a mail channel, a reminder and a timeout default. */
function opflowConfigWithReviewers(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'opflow-reviewers-')), 'opflow.config.json');
  const reviewers = {
    channels: { legal: { type: 'email', to: ['alice@example.com'] } },
    rules: [
      {
        name: 'all',
        notify: ['legal'],
        remind: { every: '30m', times: 1 },
        timeout: { after: '2h', answer: 'preselected' },
      },
    ],
  };
  writeFileSync(file, JSON.stringify({ reviewers }));
  return file;
}

/** A demo job waiting for its recommendations to be chosen, as the step worker leaves it. */
function awaitingJob(now: number): Job {
  return makeJob({
    workflow: demo.name,
    status: 'AWAITING_INPUT',
    step: 'recommend',
    selection: { mode: 'manual' },
    context: { taskId: 'task-1' },
    pending: {
      step: 'recommend',
      nextStep: 'submit',
      prompt: 'Choose recommendations',
      options: [
        { id: 'r1', label: 'a hinge', preselected: true },
        { id: 'r2', label: 'a latch', preselected: false },
      ],
      min: 1,
      max: 2,
      offeredAt: now,
    },
    nextRunAt: now,
    deadlineAt: now + 24 * 3_600_000,
    createdAt: now,
    updatedAt: now,
  });
}

describe('the dev roles of a stack with reviewers against the calls of their pass and page (emulators)', () => {
  let stage: SynthesizedStage;
  let pipeline: AwsPipeline;
  let names: ResourceNames;
  let recorder: ReturnType<typeof createCallRecorder>;
  let env: Record<string, string>;
  let secrets: SecretsManagerReviewerSecrets;
  let now = Date.UTC(2030, 0, 15, 12, 0, 0);

  beforeAll(async () => {
    stage = synthStage({ stage: 'dev', opflowConfig: opflowConfigWithReviewers() }, { bundle: false });
    const { stack } = stage;
    const tableName = await createTableFromTemplate(stage);
    const { queueUrl } = emulators.createQueue();
    const bucketName = emulators.createBucket();
    names = {
      table: { name: tableName, logicalId: logicalId(stack, stack.storage.table) },
      queue: { url: queueUrl, logicalId: logicalId(stack, stack.workQueue.queue) },
      bucket: { name: bucketName, logicalId: logicalId(stack, stack.storage.reportBucket) },
    };
    // The config item as the deploy writes it; the link key as the stack generates it.
    await emulators.clients.dynamoDb.send(new PutItemCommand(automationConfigPut(stage.template, tableName)));
    const prefix = stack.reviewers!.secretPrefix;
    emulators.secretsManager?.setSecret(reviewerSecretNames.linkKey(prefix), 'k'.repeat(64));
    const endpoints = emulators.clientConfig.endpoints ?? {};
    // The sweeper's environment as deployed; its public URL (the HTTP API's, a Fn::Join) stands in.
    const { OPFLOW_PUBLIC_URL: _publicUrl, ...variables } = environmentOf(stage, 'sweeper');
    env = {
      ...resolvedEnvironment(variables, {
        [names.table.logicalId]: tableName,
        [names.queue.logicalId]: queueUrl,
        [names.bucket.logicalId]: bucketName,
        [logicalId(stack, stack.inbox.ingest.function)]: `${stack.config.names.resourcePrefix}-ingest`,
      }),
      OPFLOW_PUBLIC_URL: 'https://api.example.com',
      AWS_REGION: emulators.region,
      AWS_ENDPOINT_URL_DYNAMODB: String(endpoints.dynamodb),
      AWS_ENDPOINT_URL_SQS: String(endpoints.sqs),
      AWS_ENDPOINT_URL_S3: String(endpoints.s3),
      AWS_ENDPOINT_URL_SECRETS_MANAGER: String(endpoints.secretsManager),
    };
    expect(env[reviewSecretPrefixVariable]).toBe(prefix);
    recorder = createCallRecorder();
    pipeline = buildAwsPipeline({
      env,
      workflows: new Map([[demo.name, demo]]),
      client: documentClient,
      clock: { now: () => now },
      random: () => 0.5,
      instrumentAwsClient: recorder.instrument,
    });
    // The secrets through the pipeline's recorded client, read as the functions read them.
    secrets = new SecretsManagerReviewerSecrets(pipeline.aws.clients.secretsManager, prefix);
  }, 180_000);

  afterAll(async () => {
    await pipeline?.close();
  });

  /** The permissions `calls` need that the role `role` (a function's) does not grant. */
  function denied(role: { node: { defaultChild?: unknown } }, calls: RecordedCall[]) {
    const roleId = stage.stack.getLogicalId(role.node.defaultChild as CfnElement);
    const statements = allowStatementsOfRole(resourcesOf(stage), roleId);
    return calls.flatMap((call) => permissionsOf(call, names)).filter((p) => !allows(statements, p));
  }

  it("lets the sweeper run the reviewers' pass: the config item, the secrets, a round, its failed mail retried, the timeout's default", async () => {
    const job = awaitingJob(now);
    await pipeline.deps.store.create(job);
    recorder.take();
    const observability = createObservability();
    const pass = () => sweepReviews({ ...pipeline, observability }, now + 30_000, env, secrets);
    // No SMTP server is set: the round is recorded with its mail failed (the calls are the same).
    expect(await pass()).toMatchObject({ rounds: 1, failedDeliveries: 1, timedOut: 0 });
    // A minute on, the failed mail is tried again (a commit of the round's deliveries).
    now += 61_000;
    expect(await pass()).toMatchObject({ rounds: 1, failedDeliveries: 1 });
    now += 2 * 3_600_000;
    expect(await pass()).toMatchObject({ timedOut: 1 });
    expect(await pipeline.deps.store.get(job.id)).toMatchObject({ status: 'RUNNING', step: 'submit' });
    await pipeline.history.flush();
    const calls = recorder.take();
    expect(calls.map((call) => `${call.service}:${call.command}`)).toEqual(
      expect.arrayContaining([
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'secretsmanager:GetSecretValue',
        'sqs:SendMessage',
      ]),
    );
    // The config item, the job and its history: each item call's partition key is one the grants name.
    const keyed = calls.flatMap((call) => permissionsOf(call, names)).flatMap((p) => p.leadingKeys ?? []);
    expect(keyed.some((key) => key === 'CONFIG')).toBe(true);
    expect(keyed.some((key) => key.startsWith('HIST#'))).toBe(true);
    expect(denied(stage.stack.sweeper.role, calls)).toEqual([]);
  });

  it('lets the webhooks function serve the confirmation page: the link key, the job, its answer', async () => {
    const job = awaitingJob(now);
    await pipeline.deps.store.create(job);
    recorder.take();
    const token = signReviewLink(
      {
        jobId: job.id,
        step: 'recommend',
        offeredAt: job.pending!.offeredAt,
        recipient: 'alice@example.com',
        expiresAt: now + 3_600_000,
      },
      await secrets.linkKey(),
    );
    const page = awsReviewPage({ ...pipeline, observability: createObservability() }, env, secrets)!;
    const opened = await page({ method: 'GET', token });
    expect(opened.status).toBe(200);
    const form = reviewFormOf(opened.headers['set-cookie'], opened.body);
    const answered = await page({
      method: 'POST',
      token,
      body: new URLSearchParams([
        ['option', 'r2'],
        ['form', form.field],
      ]).toString(),
      cookie: form.cookie,
    });
    expect(answered.status).toBe(200);
    await pipeline.history.flush();
    const calls = recorder.take();
    expect(calls.map((call) => `${call.service}:${call.command}`)).toEqual(
      expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem', 'sqs:SendMessage']),
    );
    expect(denied(stage.stack.automation.webhookReceiver.role, calls)).toEqual([]);
  });
});
