/**
 * The optional customer-managed KMS key (`kms` in the stage settings): off by default (AWS-owned
 * keys, SSE-SQS); on, one key (created with rotation, or imported by ARN) encrypts the job table,
 * the report bucket and the queues, every function may use it, and cdk-nag's AwsSolutions and
 * Serverless packs pass either way.
 */
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { PipelineFunction } from '../../../infra/lib/pipeline-function';
import { opflowConfigWithOneSchedule, type SynthesizedStage, synthStage } from '../support/synth-stage';

const IMPORTED_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

type Resource = { Properties: Record<string, unknown>; DeletionPolicy?: string };

let off: SynthesizedStage;
let created: SynthesizedStage;
let imported: SynthesizedStage;

beforeAll(() => {
  // One schedule, so the schedules' dead-letter queue is in the template too.
  const opflowConfig = opflowConfigWithOneSchedule();
  const opflowStack = JSON.stringify({
    stages: {
      prod: { kms: { enabled: true } },
      qa: { kms: { enabled: true, keyArn: IMPORTED_KEY } },
    },
  });
  const synth = (stage: string) => synthStage({ stage, opflowStack, opflowConfig }, { bundle: false });
  off = synth('dev');
  created = synth('prod');
  imported = synth('qa');
}, 300_000);

const resources = (stage: SynthesizedStage, type: string) =>
  Object.values(stage.template.findResources(type)) as Resource[];

const keyId = (stage: SynthesizedStage) => {
  const [id] = Object.keys(stage.template.findResources('AWS::KMS::Key'));
  return { 'Fn::GetAtt': [id, 'Arn'] };
};

/** The queues by name: `KmsMasterKeyId` or SSE-SQS. */
function queueEncryption(stage: SynthesizedStage): Record<string, unknown> {
  return Object.fromEntries(
    resources(stage, 'AWS::SQS::Queue').map((queue) => [
      queue.Properties['QueueName'],
      queue.Properties['KmsMasterKeyId'] ?? (queue.Properties['SqsManagedSseEnabled'] ? 'SSE-SQS' : 'none'),
    ]),
  );
}

describe('the customer-managed key', () => {
  it('is off by default: AWS-owned keys for the table and bucket, SSE-SQS for the queues', () => {
    expect(resources(off, 'AWS::KMS::Key')).toEqual([]);
    const [table] = resources(off, 'AWS::DynamoDB::Table');
    expect(table?.Properties['SSESpecification']).toEqual({ SSEEnabled: false });
    const sse = resources(off, 'AWS::S3::Bucket').map(
      (bucket) =>
        (bucket.Properties['BucketEncryption'] as { ServerSideEncryptionConfiguration: unknown[] })
          .ServerSideEncryptionConfiguration,
    );
    expect(sse).toEqual([
      [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    ]);
    expect(new Set(Object.values(queueEncryption(off)))).toEqual(new Set(['SSE-SQS']));
  });

  it('is created with rotation, an alias and the stage removal policy, and encrypts table, bucket and queues', () => {
    const [key] = resources(created, 'AWS::KMS::Key');
    expect(key?.Properties['EnableKeyRotation']).toBe(true);
    expect(key?.DeletionPolicy).toBe('Retain');
    expect(resources(created, 'AWS::KMS::Alias').map((a) => a.Properties['AliasName'])).toEqual([
      'alias/opflow-prod-data',
    ]);
    const arn = keyId(created);
    const [table] = resources(created, 'AWS::DynamoDB::Table');
    expect(table?.Properties['SSESpecification']).toEqual({
      SSEEnabled: true,
      SSEType: 'KMS',
      KMSMasterKeyId: arn,
    });
    const reportBucket = created.stack.getLogicalId(
      created.stack.storage.reportBucket.node.defaultChild as never,
    );
    expect(
      created.template.findResources('AWS::S3::Bucket')[reportBucket]?.['Properties']['BucketEncryption'],
    ).toEqual({
      ServerSideEncryptionConfiguration: [
        {
          BucketKeyEnabled: true,
          ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: arn },
        },
      ],
    });
    expect(queueEncryption(created)).toEqual({
      'opflow-prod-work': arn,
      'opflow-prod-work-dlq': arn,
      'opflow-prod-schedule-dlq': arn,
      'opflow-prod-events-dlq': arn,
      // It holds S3 events of uploads and stopped batches' notices only.
      'opflow-prod-ingest-dlq': 'SSE-SQS',
    });
  });

  it('is imported by ARN: no key created, the ARN everywhere', () => {
    expect(resources(imported, 'AWS::KMS::Key')).toEqual([]);
    const [table] = resources(imported, 'AWS::DynamoDB::Table');
    expect(table?.Properties['SSESpecification']).toMatchObject({ KMSMasterKeyId: IMPORTED_KEY });
    expect(queueEncryption(imported)['opflow-qa-work']).toBe(IMPORTED_KEY);
  });

  it.each([
    ['created', () => created, () => keyId(created) as unknown],
    ['imported', () => imported, () => IMPORTED_KEY as unknown],
  ])('(%s) may be used for data by every function', (_name, stageOf, keyOf) => {
    const stage = stageOf();
    const functions = stage.stack.node
      .findAll()
      .filter((c): c is PipelineFunction => c instanceof PipelineFunction);
    // Every function there is (a function added later is covered too), at least these six.
    expect(functions.map((fn) => fn.node.id)).toEqual(
      expect.arrayContaining(['Api', 'CallbackSender', 'Ingest', 'ScheduleTarget', 'StepWorker', 'Sweeper']),
    );
    const policies = stage.template.findResources('AWS::IAM::Policy');
    for (const fn of functions) {
      const policyId = stage.stack.getLogicalId(
        fn.role.node.findChild('DefaultPolicy').node.defaultChild as never,
      );
      const statements = (
        (policies[policyId] ?? { Properties: {} })['Properties']['PolicyDocument'] as {
          Statement: Record<string, unknown>[];
        }
      ).Statement;
      const onKey = statements.filter((s) => JSON.stringify(s['Resource']) === JSON.stringify(keyOf()));
      const actions = new Set(onKey.flatMap((s) => [s['Action']].flat()));
      expect(actions, fn.node.path).toContain('kms:Decrypt');
      expect(
        [...actions].some((a) => String(a).startsWith('kms:GenerateDataKey')),
        fn.node.path,
      ).toBe(true);
    }
  });

  it.each([
    ['off', () => off],
    ['created', () => created],
    ['imported', () => imported],
  ])('(%s) passes cdk-nag AwsSolutions and Serverless', (_name, stageOf) => {
    for (const pack of [new AwsSolutionsChecks(), new ServerlessChecks()]) {
      const report = pack.validateScope(stageOf().stack);
      expect(
        report.violations.map((v) => `${v.ruleName}: ${v.violatingResources[0]?.constructPath}`),
      ).toEqual([]);
    }
  });
});
