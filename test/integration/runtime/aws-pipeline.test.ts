// The aws runtime as `opflow --backend aws` opens it: settings from the stack's outputs in the
// environment (every problem named by its variable), then the engine's commands on the emulators.
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerSelection, cancelJob, submitJob } from '../../../shared/engine/jobs';
import { createAwsPipeline, loadAwsConfig } from '../../../shared/runtime/aws-pipeline';
import { ConfigError } from '../../../shared/runtime/config';
import { workflows } from '../../../shared/workflows';
import { type AwsEmulators, startAwsEmulators } from '../../support/aws-emulators';

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
      expect(pipeline.backend).toBe('aws');
      expect(pipeline.start).toBeUndefined();
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
