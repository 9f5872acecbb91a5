// The inbox ingestion construct in the synthesized stack: uploads under inbox/ reach the ingest queue,
// the ingest function consumes it one message at a time with partial failures, may send its own
// continuations and work messages, and stays inside the stack's cdk-nag rules.
import { describe, expect, it } from 'vitest';
import { synthStage } from '../support/synth-stage';

describe('inbox ingestion', () => {
  const { template } = synthStage({ stage: 'dev' }, { bundle: false });
  const json = template.toJSON() as { Resources: Record<string, unknown>; Outputs: Record<string, unknown> };
  const resources = (type: string) =>
    Object.entries(
      json.Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>,
    ).filter(([, resource]) => resource.Type === type);

  it('announces uploads under inbox/ on the ingest queue', () => {
    const [notification] = resources('Custom::S3BucketNotifications');
    const config = JSON.stringify(notification?.[1].Properties.NotificationConfiguration);
    expect(config).toContain('"QueueConfigurations"');
    expect(config).toContain('"Events":["s3:ObjectCreated:*"]');
    expect(config).toContain('{"Name":"prefix","Value":"inbox/"}');
  });

  it('runs the ingest function from the ingest queue, one message at a time, for up to 15 minutes', () => {
    const fn = resources('AWS::Lambda::Function').find(([, r]) =>
      String(r.Properties.FunctionName).endsWith('-ingest'),
    );
    expect(fn?.[1].Properties.Timeout).toBe(900);
    const env = (
      (fn?.[1].Properties.Environment ?? { Variables: {} }) as { Variables: Record<string, unknown> }
    ).Variables;
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining([
        'OPFLOW_TABLE_NAME',
        'OPFLOW_QUEUE_URL',
        'OPFLOW_BUCKET_NAME',
        'OPFLOW_INGEST_QUEUE_URL',
      ]),
    );
    const mappings = resources('AWS::Lambda::EventSourceMapping').filter(([, r]) =>
      JSON.stringify(r.Properties.FunctionName).includes('Ingest'),
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0]?.[1].Properties).toMatchObject({
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    // A batch continues through the function's own queue: Lambda must not cut the chain at 16.
    const ingest = resources('AWS::Lambda::Function').find(([, r]) =>
      String(r.Properties.FunctionName).endsWith('-ingest'),
    );
    expect(ingest?.[1].Properties.RecursiveLoop).toBe('Allow');
    const queue = resources('AWS::SQS::Queue').find(([, r]) =>
      String(r.Properties.QueueName).endsWith('-ingest'),
    );
    expect(queue?.[1].Properties.VisibilityTimeout).toBe(5400);
  });

  it('exports the ingest queue for opflow --backend aws ingest', () => {
    expect(Object.keys(json.Outputs)).toContain('IngestQueueUrl');
  });
});
