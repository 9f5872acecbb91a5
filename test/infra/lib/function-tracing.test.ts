// The stage's `tracing` setting, read from the synthesized template: off by default (no TracingConfig,
// no X-Ray permission), Lambda's active tracing, or active tracing with an OpenTelemetry layer and
// its wrapper; each mode passes cdk-nag's packs with its own acknowledgements, and the setting is
// validated naming the field.
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { InvalidStageConfigError, parseStageConfig, stageDefaults } from '../../../infra/config';
import { type FunctionTracing, OPENTELEMETRY_EXEC_WRAPPER } from '../../../infra/lib/function-tracing';
import { PipelineFunction } from '../../../infra/lib/pipeline-function';

const LAYER_ARN = 'arn:aws:lambda:us-east-1:615299751070:layer:AWSOpenTelemetryDistroJs:8';

/** One PipelineFunction in a stack of its own (code not bundled), traced as `tracing` says. */
function functionTraced(tracing: FunctionTracing | undefined) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Traced', { env: { region: 'us-east-1' } });
  const fn = new PipelineFunction(stack, 'Fn', {
    name: 'sweeper',
    functionName: 'opflow-test-sweeper',
    description: 'tracing test',
    timeout: Duration.seconds(30),
    memorySize: 256,
    environment: { OPFLOW_QPS: '1' },
    logRetention: RetentionDays.ONE_WEEK,
    removalPolicy: 'destroy',
    tracing,
  });
  const template = Template.fromStack(stack);
  const [resource] = Object.values(template.findResources('AWS::Lambda::Function')) as {
    Properties: Record<string, unknown>;
  }[];
  const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
    (policy) => policy['Properties']['PolicyDocument']['Statement'] as { Action: string | string[] }[],
  );
  const actions = statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
  const violations = [new AwsSolutionsChecks(), new ServerlessChecks()].flatMap((pack) =>
    pack
      .validateScope(stack)
      .violations.map((v) => `${v.ruleName}: ${v.violatingResources[0]?.constructPath}`),
  );
  return { fn, properties: resource?.Properties ?? {}, actions, violations };
}

describe('function tracing', { timeout: 180_000 }, () => {
  it('is off by default: no TracingConfig, no layer, no X-Ray permission; cdk-nag acknowledged', () => {
    for (const tracing of [undefined, { mode: 'off' } as const]) {
      const { properties, actions, violations } = functionTraced(tracing);
      expect(properties['TracingConfig']).toBeUndefined();
      expect(properties['Layers']).toBeUndefined();
      expect(JSON.stringify(properties['Environment'])).not.toContain('AWS_LAMBDA_EXEC_WRAPPER');
      expect(actions.filter((a) => a.startsWith('xray:'))).toEqual([]);
      expect(violations).toEqual([]);
    }
  });

  it("'active' turns on Lambda's active tracing with the X-Ray actions, and no layer", () => {
    const { properties, actions, violations } = functionTraced({ mode: 'active' });
    expect(properties['TracingConfig']).toEqual({ Mode: 'Active' });
    expect(properties['Layers']).toBeUndefined();
    expect(actions).toEqual(expect.arrayContaining(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']));
    expect(violations).toEqual([]);
  });

  it("'opentelemetry' adds the layer and its wrapper to active tracing", () => {
    const { properties, violations } = functionTraced({ mode: 'opentelemetry', layerArn: LAYER_ARN });
    expect(properties['TracingConfig']).toEqual({ Mode: 'Active' });
    expect(properties['Layers']).toEqual([LAYER_ARN]);
    expect(properties['Environment']).toMatchObject({
      Variables: { AWS_LAMBDA_EXEC_WRAPPER: OPENTELEMETRY_EXEC_WRAPPER, OPFLOW_QPS: '1' },
    });
    expect(violations).toEqual([]);
  });

  it('is a stage setting, off unless set, validated naming the field', () => {
    expect(parseStageConfig(stageDefaults.dev).tracing).toEqual({ mode: 'off' });
    const { tracing: _omitted, ...withoutTracing } = stageDefaults.prod;
    expect(parseStageConfig(withoutTracing).tracing).toEqual({ mode: 'off' });
    expect(
      parseStageConfig({ ...stageDefaults.dev, tracing: { mode: 'opentelemetry', layerArn: LAYER_ARN } })
        .tracing,
    ).toEqual({ mode: 'opentelemetry', layerArn: LAYER_ARN });
    const refused = (tracing: unknown) => {
      try {
        parseStageConfig({ ...stageDefaults.dev, tracing });
      } catch (error) {
        if (error instanceof InvalidStageConfigError) return error.issues.map((i) => i.path);
        throw error;
      }
      throw new Error('accepted');
    };
    expect(refused({ mode: 'opentelemetry' })).toEqual(['tracing.layerArn']);
    expect(refused({ mode: 'opentelemetry', layerArn: 'AWSOpenTelemetryDistroJs:8' })).toEqual([
      'tracing.layerArn',
    ]);
    expect(refused({ mode: 'xray' })).toEqual(['tracing.mode']);
    expect(refused({ mode: 'active', layerArn: LAYER_ARN })).toEqual(['tracing']);
  });
});
