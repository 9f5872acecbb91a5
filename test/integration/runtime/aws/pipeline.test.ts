// The aws runtime as `opflow --backend aws` opens it: settings from the stack's outputs in the
// environment (every problem named by its variable), then the engine's commands on the emulators.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import { answerSelection, cancelJob, submitJob } from '../../../../shared/engine/job-commands';
import { createAwsPipeline, loadAwsConfig } from '../../../../shared/runtime/aws/pipeline';
import { ConfigError } from '../../../../shared/runtime/config-error';
import { workflows } from '../../../../shared/workflows';

const stackOutputs = {
  OPFLOW_TABLE_NAME: 'opflow-jobs',
  OPFLOW_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/opflow-work',
  OPFLOW_BUCKET_NAME: 'opflow-reports',
  OPFLOW_API_KEY_SECRET_PREFIX: 'opflow/api-key/',
  AWS_REGION: 'eu-west-1',
};

describe('loadAwsConfig', () => {
  it('reads the stack outputs, with defaults for the rest', () => {
    expect(loadAwsConfig(stackOutputs)).toEqual({
      tableName: 'opflow-jobs',
      queueUrl: stackOutputs.OPFLOW_QUEUE_URL,
      bucketName: 'opflow-reports',
      apiKeySecretPrefix: 'opflow/api-key/',
      region: 'eu-west-1',
      qps: 5,
      keyCacheSeconds: 300,
      admission: 'on',
    });
    expect(loadAwsConfig({ ...stackOutputs, AWS_REGION: '', AWS_DEFAULT_REGION: 'us-west-2' }).region).toBe(
      'us-west-2',
    );
  });

  it('names every missing or wrong variable at once', () => {
    const error = (() => {
      try {
        loadAwsConfig({ OPFLOW_QUEUE_URL: 'not a url', OPFLOW_QPS: 'fast', AWS_ENDPOINT_URL_S3: 'nope' });
      } catch (caught) {
        return caught as ConfigError;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    for (const variable of [
      'OPFLOW_TABLE_NAME: is not set',
      'OPFLOW_QUEUE_URL: must be an http(s) URL (got "not a url")',
      'OPFLOW_BUCKET_NAME: is not set',
      'OPFLOW_API_KEY_SECRET_PREFIX: is not set',
      'AWS_REGION: is not set',
      'OPFLOW_QPS: must be a number',
      'AWS_ENDPOINT_URL_S3: must be an http(s) URL',
    ]) {
      expect(error?.message).toContain(variable);
    }
  });

  it('talks to emulators when endpoints are given, with emulator credentials unless some are set', () => {
    const emulated = loadAwsConfig({ ...stackOutputs, AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' });
    expect(emulated).toMatchObject({
      endpointUrl: 'http://127.0.0.1:4566',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const profiled = loadAwsConfig({
      ...stackOutputs,
      AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:9324',
      AWS_PROFILE: 'dev',
    });
    expect(profiled.endpoints).toEqual({ sqs: 'http://127.0.0.1:9324' });
    expect(profiled.credentials).toBeUndefined();
    expect(loadAwsConfig(stackOutputs).credentials).toBeUndefined();
  });
});

describe('loadAwsConfig with a saved profile of the stack (cdk deploy --outputs-file)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-stack-outputs-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const outputsOf = (prefix: string) => ({
    ApiUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/',
    TableName: `${prefix}-jobs`,
    QueueUrl: `https://sqs.eu-west-1.amazonaws.com/123456789012/${prefix}-work`,
    BucketName: `${prefix}-reports`,
    ApiKeySecretPrefix: `${prefix}/api-key/`,
  });
  const save = (name: string, content: unknown) => {
    const file = join(dir, name);
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  };

  it('reads the outputs from the file, and the region from the queue URL', () => {
    const file = save('dev.json', { 'opflow-dev': outputsOf('opflow-dev') });
    expect(loadAwsConfig({ OPFLOW_STACK_OUTPUTS: file, AWS_PROFILE: 'dev' })).toEqual({
      tableName: 'opflow-dev-jobs',
      queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/opflow-dev-work',
      bucketName: 'opflow-dev-reports',
      apiKeySecretPrefix: 'opflow-dev/api-key/',
      region: 'eu-west-1',
      qps: 5,
      keyCacheSeconds: 300,
      admission: 'on',
    });
    // Variables that are set win over the file.
    const overridden = loadAwsConfig({
      OPFLOW_STACK_OUTPUTS: file,
      OPFLOW_TABLE_NAME: 'other',
      AWS_REGION: 'us-east-2',
    });
    expect(overridden).toMatchObject({
      tableName: 'other',
      bucketName: 'opflow-dev-reports',
      region: 'us-east-2',
    });
  });

  it('takes the stack OPFLOW_STACK_NAME names from a file of several', () => {
    const file = save('both.json', {
      'opflow-dev': outputsOf('opflow-dev'),
      'opflow-prod': outputsOf('opflow-prod'),
    });
    expect(loadAwsConfig({ OPFLOW_STACK_OUTPUTS: file, OPFLOW_STACK_NAME: 'opflow-prod' }).tableName).toBe(
      'opflow-prod-jobs',
    );
    expect(() => loadAwsConfig({ OPFLOW_STACK_OUTPUTS: file })).toThrow(
      /OPFLOW_STACK_NAME: is not set, and .*both\.json has 2 stacks \(opflow-dev, opflow-prod\)/,
    );
    expect(() => loadAwsConfig({ OPFLOW_STACK_OUTPUTS: file, OPFLOW_STACK_NAME: 'opflow-test' })).toThrow(
      /has no stack "opflow-test" \(it has opflow-dev, opflow-prod\)/,
    );
  });

  it('says what is wrong with the file, or what it lacks', () => {
    expect(() => loadAwsConfig({ OPFLOW_STACK_OUTPUTS: join(dir, 'missing.json') })).toThrow(
      /OPFLOW_STACK_OUTPUTS: cannot read .*missing\.json as JSON/,
    );
    expect(() => loadAwsConfig({ OPFLOW_STACK_OUTPUTS: save('list.json', ['x']) })).toThrow(
      /list\.json is not what cdk deploy --outputs-file writes/,
    );
    const { BucketName: _, ...withoutBucket } = outputsOf('opflow-dev');
    const file = save('partial.json', { 'opflow-dev': withoutBucket });
    expect(() => loadAwsConfig({ OPFLOW_STACK_OUTPUTS: file })).toThrow(
      /OPFLOW_BUCKET_NAME: is not set, nor BucketName in .*partial\.json/,
    );
  });
});

describe('createAwsPipeline on emulators', () => {
  let emulators: AwsEmulators;
  let env: Record<string, string>;
  beforeAll(async () => {
    emulators = await startAwsEmulators();
    const endpoints = emulators.clientConfig.endpoints!;
    env = {
      OPFLOW_TABLE_NAME: await emulators.createTable(),
      OPFLOW_QUEUE_URL: emulators.createQueue().queueUrl,
      OPFLOW_BUCKET_NAME: emulators.createBucket(),
      OPFLOW_API_KEY_SECRET_PREFIX: 'opflow/api-key/',
      AWS_REGION: emulators.region,
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb!,
      AWS_ENDPOINT_URL_SQS: endpoints.sqs!,
      AWS_ENDPOINT_URL_S3: endpoints.s3!,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoints.secretsManager!,
    };
  });
  afterAll(async () => {
    await emulators?.stop();
  });

  it('submits, reads, lists and cancels jobs in the stack, handing the work to the queue', async () => {
    const pipeline = await createAwsPipeline({ env, workflows, qps: 2 });
    try {
      expect(pipeline.kind).toBe('aws');
      expect(pipeline.work.where).toBe('elsewhere');
      expect(pipeline.config.qps).toBe(2);
      expect(pipeline.description).toContain(env.OPFLOW_TABLE_NAME);
      const seen: string[] = [];
      pipeline.onJobChange((job) => seen.push(`${job.id}:${job.status}`));

      const { job } = await submitJob(pipeline.deps, {
        workflow: 'find-solution',
        input: { problem: 'How to keep a drone battery warm in winter?' },
        selection: { mode: 'manual' },
      });
      const received = await emulators.clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: env.OPFLOW_QUEUE_URL, MaxNumberOfMessages: 10 }),
      );
      expect(received.Messages?.map((message) => message.Body)).toEqual([
        JSON.stringify({ jobId: job.id, version: 1 }),
      ]);
      expect(await pipeline.deps.store.get(job.id)).toEqual(job);
      expect((await pipeline.deps.store.list({ status: 'QUEUED' })).jobs.map((listed) => listed.id)).toEqual([
        job.id,
      ]);

      await expect(answerSelection(pipeline.deps, job.id, ['r1'])).rejects.toThrow(
        /not awaiting a selection/,
      );
      const cancelled = await cancelJob(pipeline.deps, job.id);
      expect(cancelled.status).toBe('CANCELLED');
      expect(seen).toEqual([`${job.id}:QUEUED`, `${job.id}:CANCELLED`]);
    } finally {
      await pipeline.close();
    }
  });

  it('refuses to open with an incomplete environment, saying what is missing', async () => {
    await expect(createAwsPipeline({ env: { ...env, OPFLOW_TABLE_NAME: '' }, workflows })).rejects.toThrow(
      /OPFLOW_TABLE_NAME: is not set/,
    );
  });
});
