/**
 * Stacks in one account do not collide: every physical name a template sets carries the stack's
 * stage (and generation), so two stages share none, and a stack deployed again after `cdk destroy`
 * with the next generation shares none with the resources the first one retained.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { opflowConfigWithOneSchedule, type SynthesizedStage, synthStage } from '../support/synth-stage';

/** Where each resource type keeps its physical name (unique in an account and region, or globally). */
const PHYSICAL_NAME: Record<string, string> = {
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::S3::Bucket': 'BucketName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::SecretsManager::Secret': 'Name',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::Events::Rule': 'Name',
  'AWS::Scheduler::Schedule': 'Name',
  'AWS::Scheduler::ScheduleGroup': 'Name',
  'AWS::ApiGatewayV2::Api': 'Name',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::CloudWatch::CompositeAlarm': 'AlarmName',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::KMS::Alias': 'AliasName',
};

/** Properties named `...Name` that are not a physical name of their resource (a reference, a label, a scope-local name). */
const NOT_A_PHYSICAL_NAME = new Set([
  'AWS::IAM::Policy PolicyName', // inline policy: unique within its role only
  'AWS::Lambda::EventSourceMapping FunctionName',
  'AWS::Lambda::Permission FunctionName',
  'AWS::Lambda::EventInvokeConfig FunctionName',
  'Custom::S3BucketNotifications BucketName',
  'Custom::S3AutoDeleteObjects BucketName',
  'AWS::ApiGatewayV2::Stage StageName',
  'AWS::CloudWatch::Alarm MetricName',
  'AWS::SNS::Topic DisplayName',
  'AWS::Scheduler::Schedule GroupName',
]);

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
}

/**
 * Each physical name the template sets, as `<type> <name>` (names are unique per kind: a queue and a
 * function may share one), and whether the resource outlives the stack.
 */
function physicalNames(stage: SynthesizedStage): { type: string; name: string; retained: boolean }[] {
  const resources = stage.template.toJSON()['Resources'] as Record<string, Resource>;
  return Object.values(resources).flatMap((resource) => {
    const property = PHYSICAL_NAME[resource.Type];
    const value = property ? resource.Properties?.[property] : undefined;
    if (value === undefined) return [];
    return [
      {
        type: resource.Type,
        name: `${resource.Type} ${typeof value === 'string' ? value : JSON.stringify(value)}`,
        retained: resource.DeletionPolicy === 'Retain',
      },
    ];
  });
}

/** `...Name` properties of the template that are neither a known physical name nor known not to be one. */
function unclassifiedNameProperties(stage: SynthesizedStage): string[] {
  const resources = stage.template.toJSON()['Resources'] as Record<string, Resource>;
  return Object.values(resources).flatMap((resource) =>
    Object.keys(resource.Properties ?? {})
      .filter((key) => key.endsWith('Name'))
      .map((key) => `${resource.Type} ${key}`)
      .filter((entry) => entry !== `${resource.Type} ${PHYSICAL_NAME[resource.Type]}`)
      .filter((entry) => !NOT_A_PHYSICAL_NAME.has(entry)),
  );
}

const common = (
  a: SynthesizedStage,
  b: SynthesizedStage,
  only: (n: { retained: boolean }) => boolean = () => true,
) => {
  const names = new Set(
    physicalNames(a)
      .filter(only)
      .map((n) => n.name),
  );
  return physicalNames(b)
    .map((n) => n.name)
    .filter((name) => names.has(name));
};

let dev: SynthesizedStage;
let staging: SynthesizedStage;
let prod: SynthesizedStage;
let prodNextGeneration: SynthesizedStage;

beforeAll(() => {
  // One schedule, so the template holds EventBridge Scheduler's resources too.
  const opflowConfig = opflowConfigWithOneSchedule();
  const opflowStack = JSON.stringify({
    stages: { staging: { base: 'prod', tenants: ['default', 'acme'] }, prod: { names: { generation: 2 } } },
  });
  const synth = (context: Record<string, string>) =>
    synthStage({ opflowConfig, ...context }, { bundle: false });
  dev = synth({ stage: 'dev' });
  staging = synth({ stage: 'staging', opflowStack });
  prod = synth({ stage: 'prod' });
  prodNextGeneration = synth({ stage: 'prod', opflowStack });
}, 300_000);

describe('physical names', () => {
  it('are all classified: a new resource type with a name property is either a physical name or known not to be one', () => {
    for (const stage of [dev, staging, prod]) expect(unclassifiedNameProperties(stage)).toEqual([]);
    // The check sees the kinds it is about.
    const types = new Set(physicalNames(dev).map((n) => n.type));
    for (const type of [
      'AWS::DynamoDB::Table',
      'AWS::SQS::Queue',
      'AWS::Logs::LogGroup',
      'AWS::Scheduler::Schedule',
    ])
      expect(types).toContain(type);
  });

  it('are unique within a stack, and two stacks of different stages share none', () => {
    for (const stage of [dev, staging, prod]) {
      const names = physicalNames(stage).map((n) => n.name);
      expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    }
    expect(common(dev, staging)).toEqual([]);
    expect(common(dev, prod)).toEqual([]);
    expect(common(staging, prod)).toEqual([]);
  });

  it("of a stage's next generation share none with the resources the previous one retains", () => {
    const retained = physicalNames(prod).filter((n) => n.retained);
    // prod retains its table, secrets and log groups (the buckets are named by CloudFormation).
    expect(new Set(retained.map((n) => n.type))).toEqual(
      new Set(['AWS::DynamoDB::Table', 'AWS::SecretsManager::Secret', 'AWS::Logs::LogGroup']),
    );
    expect(common(prod, prodNextGeneration, (n) => n.retained)).toEqual([]);
    expect(common(prod, prodNextGeneration)).toEqual([]);
    expect(prodNextGeneration.stack.stackName).toBe('opflow-prod');
    expect(physicalNames(prodNextGeneration).map((n) => n.name)).toContain(
      'AWS::DynamoDB::Table opflow-prod-g2-jobs',
    );
  });

  it('leave the bucket names to CloudFormation (globally unique, retained in prod)', () => {
    for (const stage of [dev, prod])
      for (const bucket of Object.values(stage.template.findResources('AWS::S3::Bucket')))
        expect(bucket['Properties']['BucketName']).toBeUndefined();
  });
});
