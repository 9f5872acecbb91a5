// What `opflow --backend aws doctor` decides from the answers of SNS and Lambda, fed with the
// services' typed answers: the alarm topic's subscriptions, the account's concurrency against the
// stack's caps, and the recursion setting of the functions that send to their own queue.
import { describe, expect, it } from 'vitest';
import {
  alarmTopicCheck,
  concurrencyCheck,
  type FunctionFacts,
  recursionCheck,
} from '../../../../shared/backends/aws/account-checks';
import { QUEUE_CHAINED_FUNCTIONS } from '../../../../shared/backends/aws/account-doctor';

const topic = 'arn:aws:sns:eu-west-1:123456789012:opflow-dev-alarms';

describe('the alarm topic', () => {
  it('is ok with a confirmed subscription, even beside one awaiting confirmation', () => {
    const check = alarmTopicCheck(topic, [
      { Protocol: 'email', SubscriptionArn: `${topic}:0f1e` },
      { Protocol: 'email', SubscriptionArn: 'PendingConfirmation' },
    ]);
    expect(check).toMatchObject({ status: 'ok' });
    expect(check.detail).toContain('1 confirmed subscription(s) (email), 1 awaiting confirmation');
  });

  it('warns while the only subscription awaits its confirmation, saying which mail to open', () => {
    const check = alarmTopicCheck(topic, [{ Protocol: 'email', SubscriptionArn: 'PendingConfirmation' }]);
    expect(check).toMatchObject({ status: 'warn' });
    expect(check.detail).toMatch(/not confirmed yet, so alarms reach nobody/);
    expect(check.fix).toMatch(/Subscription Confirmation/);
  });

  it('warns when nobody is subscribed, naming the setting', () => {
    const check = alarmTopicCheck(topic, []);
    expect(check).toMatchObject({ status: 'warn' });
    expect(check.fix).toMatch(/alarms\.email/);
  });
});

const stack = (overrides: Partial<Record<string, Partial<FunctionFacts>>> = {}): FunctionFacts[] =>
  [
    { role: 'worker', name: 'opflow-dev-step-worker', eventSourceCaps: [5], recursiveLoop: 'Allow' },
    { role: 'api', name: 'opflow-dev-api', eventSourceCaps: [], recursiveLoop: 'Terminate' },
    { role: 'webhooks', name: 'opflow-dev-webhooks', eventSourceCaps: [], recursiveLoop: 'Terminate' },
    { role: 'sweeper', name: 'opflow-dev-sweeper', eventSourceCaps: [], recursiveLoop: 'Terminate' },
    { role: 'ingest', name: 'opflow-dev-ingest', eventSourceCaps: [2], recursiveLoop: 'Allow' },
    // On the job table's stream: no SQS source, nothing sent to its own trigger.
    {
      role: 'callbacks',
      name: 'opflow-dev-callback-sender',
      eventSourceCaps: [],
      recursiveLoop: 'Terminate',
    },
  ].map((fn) => ({ ...fn, ...overrides[fn.role] }));

describe('the concurrency', () => {
  it('is ok when the event sources leave room in the unreserved pool, with the figures', () => {
    const check = concurrencyCheck({ limit: 1000, unreserved: 1000 }, stack());
    expect(check.status).toBe('ok');
    expect(check.detail).toBe(
      'the account allows 1000 at once, 1000 unreserved; the event sources may run 7 (worker 5, ingest 2), leaving 993 for the api, webhooks and sweeper',
    );
  });

  it('warns on a new account of 10 where the caps leave the api almost nothing', () => {
    const check = concurrencyCheck(
      { limit: 10, unreserved: 10 },
      stack({ worker: { eventSourceCaps: [7] } }),
    );
    expect(check.status).toBe('warn');
    expect(check.detail).toContain('leaving 1 for the api');
    expect(check.fix).toMatch(/Service Quotas.*worker\.maxConcurrency/);
  });

  it('counts reserved concurrency apart, out of the account limit', () => {
    const check = concurrencyCheck({ limit: 1000, unreserved: 995 }, stack({ webhooks: { reserved: 5 } }));
    expect(check.status).toBe('ok');
    expect(check.detail).toContain('5 reserved by the stack');
  });

  it('fails on an SQS event source without a maximum concurrency', () => {
    const check = concurrencyCheck(
      { limit: 1000, unreserved: 1000 },
      stack({ ingest: { eventSourceCaps: [undefined] } }),
    );
    expect(check.status).toBe('fail');
    expect(check.detail).toContain('opflow-dev-ingest');
  });
});

describe('the recursion settings', () => {
  it('are ok when every queue-chained function allows its loop', () => {
    expect(recursionCheck(stack(), QUEUE_CHAINED_FUNCTIONS).status).toBe('ok');
  });

  it("fail on a chained function left at Lambda's default, with the command that fixes it", () => {
    const check = recursionCheck(stack({ worker: { recursiveLoop: 'Terminate' } }), QUEUE_CHAINED_FUNCTIONS);
    expect(check.status).toBe('fail');
    expect(check.detail).toContain('opflow-dev-step-worker (Terminate)');
    expect(check.fix).toContain(
      'aws lambda put-function-recursion-config --function-name opflow-dev-step-worker --recursive-loop Allow',
    );
  });
});
