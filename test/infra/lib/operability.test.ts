// What makes a stage operable, read from the synthesized template: an errors alarm on every opflow
// function (or its dead-letter queue's, for a stream function), one alarm on the account's Lambda
// throttles, an alarm on every dead-letter queue (a queue some redrive policy
// or schedule sends to), a maximum concurrency on every SQS event source, and cdk-nag's Serverless
// pack run beside AwsSolutions (an unacknowledged Serverless finding fails synth).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpflowApp } from '../../../infra/lib/opflow-app';
import { cdkJsonContext, type SynthesizedStage, synthStage } from '../support/synth-stage';

let synth: SynthesizedStage;
beforeAll(() => {
  const file = join(mkdtempSync(join(tmpdir(), 'opflow-operable-')), 'opflow.config.json');
  writeFileSync(
    file,
    JSON.stringify({
      schedules: [{ name: 'weekly', cron: '0 6 * * 1', workflow: 'patent-count', input: { query: 'x' } }],
    }),
  );
  synth = synthStage({ stage: 'dev', opflowConfig: file }, { bundle: false });
});

type Resource = { Properties: Record<string, unknown> };
const alarms = () => Object.values(synth.template.findResources('AWS::CloudWatch::Alarm')) as Resource[];
const dimensionRefs = (alarm: Resource) =>
  JSON.stringify((alarm.Properties['Dimensions'] as unknown[] | undefined) ?? []);

describe('an operable stage', { timeout: 180_000 }, () => {
  it("alarms on errors of every opflow function (the events function's through its DLQ) and on the account's throttles", () => {
    const functions = Object.entries(synth.template.findResources('AWS::Lambda::Function')).filter(([, fn]) =>
      String(fn['Properties']['FunctionName'] ?? '').startsWith('opflow-dev-'),
    );
    expect(functions.map(([, fn]) => fn['Properties']['FunctionName']).sort()).toEqual([
      'opflow-dev-api',
      'opflow-dev-callback-sender',
      'opflow-dev-events',
      'opflow-dev-ingest',
      'opflow-dev-schedules',
      'opflow-dev-step-worker',
      'opflow-dev-sweeper',
      'opflow-dev-webhooks',
    ]);
    for (const [id, fn] of functions) {
      const found = alarms().filter(
        (alarm) =>
          alarm.Properties['MetricName'] === 'Errors' && dimensionRefs(alarm).includes(`{"Ref":"${id}"}`),
      );
      // The events function's failed batches end in its dead-letter queue, alarmed below.
      const expected = fn['Properties']['FunctionName'] === 'opflow-dev-events' ? 0 : 1;
      expect(found, `Errors alarm of ${id}`).toHaveLength(expected);
    }
    // Throttles: one alarm on the account's metric (no dimension), none per function.
    const throttles = alarms().filter((alarm) => alarm.Properties['MetricName'] === 'Throttles');
    expect(throttles).toHaveLength(1);
    expect(throttles[0]!.Properties['Dimensions']).toBeUndefined();
  });

  it('alarms on every dead-letter queue', () => {
    const template = JSON.stringify(synth.template.toJSON());
    const queues = synth.template.findResources('AWS::SQS::Queue');
    const deadLetterIds = Object.keys(queues).filter(
      (id) =>
        template.includes(`"deadLetterTargetArn":{"Fn::GetAtt":["${id}","Arn"]}`) ||
        template.includes(`"DeadLetterConfig":{"Arn":{"Fn::GetAtt":["${id}","Arn"]}}`),
    );
    // work, schedules; and the on-failure destinations of the events and ingest functions.
    const destinations = Object.values(synth.template.findResources('AWS::Lambda::EventInvokeConfig'))
      .map(
        (config) =>
          config['Properties']?.['DestinationConfig']?.['OnFailure']?.['Destination']?.['Fn::GetAtt']?.[0],
      )
      .filter((id): id is string => typeof id === 'string' && id in queues);
    expect(deadLetterIds).toHaveLength(2);
    expect(destinations).toHaveLength(1); // ingest (the events function's on-failure goes through its mapping)
    deadLetterIds.push(...destinations);
    for (const id of deadLetterIds) {
      const found = alarms().filter(
        (alarm) =>
          alarm.Properties['MetricName'] === 'ApproximateNumberOfMessagesVisible' &&
          dimensionRefs(alarm).includes(`"Fn::GetAtt":["${id}","QueueName"]`),
      );
      expect(found, `alarm of dead-letter queue ${id}`).toHaveLength(1);
    }
  });

  it('caps the concurrency of every SQS event source', () => {
    const mappings = Object.values(synth.template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      // The job table's stream (the events and callback functions) is read one invocation per shard, not scaled.
      (mapping) => mapping['Properties']['StartingPosition'] === undefined,
    );
    expect(mappings).toHaveLength(1); // the step worker (S3 invokes the ingest function: no event source)
    for (const mapping of mappings) {
      expect(mapping['Properties']['ScalingConfig']?.['MaximumConcurrency']).toBeGreaterThanOrEqual(2);
    }
  });

  it("runs cdk-nag's Serverless pack: an unacknowledged finding stops synthesis", () => {
    const app = new App({ context: { ...cdkJsonContext(), stage: 'dev', 'aws:cdk:bundling-stacks': [] } });
    const stack = buildOpflowApp(app);
    // A queue without a redrive policy and without an acknowledgement.
    new Queue(stack, 'Unwatched', { enforceSSL: true });
    expect(() => app.synth()).toThrow(/Serverless-SQSRedrivePolicy/);
  });
});
