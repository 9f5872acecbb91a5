// The alarm topic check of `opflow --backend aws doctor` against fauxqs's SNS: the subscriptions are
// read with the real SDK client (every page), and a topic with a confirmed subscription is ok while
// one without is a warning naming the setting.
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import { alarmTopicCheck } from '../../../../shared/backends/aws/account-checks';
import { topicSubscriptions } from '../../../../shared/backends/aws/account-reads';

let emulators: AwsEmulators;
let sns: SNSClient;
let config: {
  region: string;
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
};

beforeAll(async () => {
  emulators = await startAwsEmulators();
  const endpoint = String(emulators.clientConfig.endpoints?.sqs);
  config = {
    region: emulators.region,
    endpoint,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  };
  sns = new SNSClient(config);
}, 120_000);

afterAll(async () => {
  sns?.destroy();
  await emulators?.stop();
});

describe('the alarm topic on fauxqs', () => {
  it('warns for a topic nobody is subscribed to', async () => {
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'opflow-test-alarms-empty' }));
    const check = alarmTopicCheck(TopicArn!, await topicSubscriptions(config, TopicArn!));
    expect(check.status).toBe('warn');
    expect(check.detail).toContain('has no subscription');
  });

  it('is ok once a subscription is confirmed (an SQS subscription needs no mail)', async () => {
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'opflow-test-alarms' }));
    const { queueUrl } = emulators.createQueue();
    const queueArn = `arn:aws:sqs:${emulators.region}:000000000000:${queueUrl.split('/').pop()}`;
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queueArn }));
    const subscriptions = await topicSubscriptions(config, TopicArn!);
    expect(subscriptions).toHaveLength(1);
    const check = alarmTopicCheck(TopicArn!, subscriptions);
    expect(check.status).toBe('ok');
    expect(check.detail).toContain('1 confirmed subscription(s) (sqs)');
  });
});
