// The api function's webhook secrets on aws are checked at cold start (shared/runtime/lambda/automation.ts):
// every mapped source's secret is read from Secrets Manager (the emulator here) as the function
// starts, and each one missing or malformed is logged naming the source and the secret, never its
// value, instead of being found by a delivery that gets a 500. A delivery to such a source is
// refused as misconfigured, naming the source; a source with a good secret works.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../../../scripts/emulators/aws-emulators';
import type { EngineDeps } from '../../../../shared/engine/deps';
import { loadAwsConfig } from '../../../../shared/runtime/aws/config';
import { createObservability } from '../../../../shared/runtime/lambda/observability';
import { awsWebhookHandler } from '../../../../shared/runtime/lambda/webhook-handler';
import { captureProcessOutput } from '../../../support/process-output';

const prefix = 'opflow/test/webhook/';
const good = `whsec_${randomBytes(24).toString('base64')}`;
const secrets: Record<string, string> = {
  good,
  short: 'abc-not-a-key',
  broken: 'whsec_%%%not*base64%%%',
};
let emulators: AwsEmulators;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  emulators = await startAwsEmulators({ dynamoDb: false, sqsAndS3: false });
  // The function's credentials come from its environment, as on Lambda.
  for (const [name, value] of Object.entries(emulators.environment())) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  for (const [source, value] of Object.entries(secrets))
    emulators.secretsManager!.setSecret(`${prefix}${source}`, value);
}, 120_000);
afterAll(async () => {
  await emulators?.stop();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('webhook secrets on aws, at cold start', () => {
  it('logs each mapped source whose secret is missing or malformed, naming it, never the value', async () => {
    const env = {
      ...emulators.environment(),
      OPFLOW_TABLE_NAME: 't',
      OPFLOW_BUCKET_NAME: 'b',
      OPFLOW_QUEUE_URL: 'http://127.0.0.1:1/q',
      OPFLOW_API_KEY_SECRET_PREFIX: 'opflow/test/api-key/',
    };
    const mapping = { workflow: 'patent-count', input: { query: { $from: '/q' } } } as never;
    const { result: handler, output } = await captureProcessOutput(async (lines) => {
      const built = awsWebhookHandler(
        {
          deps: { clock: { now: () => Date.now() } } as EngineDeps,
          aws: { clients: { documents: emulators.clients.documents, sqs: emulators.clients.sqs } },
          config: loadAwsConfig(env),
          observability: createObservability(),
        },
        { good: mapping, short: mapping, broken: mapping, missing: mapping },
        { OPFLOW_WEBHOOK_SECRET_PREFIX: prefix },
      );
      // Nothing was delivered: the check runs as the function starts.
      await vi.waitFor(() => expect(lines()).toContain('webhook source missing'), { timeout: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      return built;
    });
    const logged = output.replace(/\\"/g, '"');
    expect(logged).toContain('webhook secret not usable (read at cold start)');
    expect(logged).toContain(`webhook source short: the secret ${prefix}short is too short`);
    expect(logged).toContain(
      `webhook source broken: the secret ${prefix}broken is not a usable signing secret`,
    );
    expect(logged).toContain(
      `webhook source missing: the secret ${prefix}missing is not set in Secrets Manager`,
    );
    expect(logged).not.toContain('webhook source good');
    for (const value of Object.values(secrets)) expect(logged).not.toContain(value);

    // A delivery to the malformed source is refused as misconfigured, naming it.
    const body = Buffer.from(JSON.stringify({ q: 'TTL:(x)' }));
    const at = new Date();
    const answer = await handler!({
      source: 'short',
      body,
      headers: {
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(good).sign('msg_1', at, body.toString('utf8')),
      },
    });
    expect(answer.status).toBe(500);
    expect(answer.body).toContain('the signing secret of source short is not usable');
  }, 60_000);
});
