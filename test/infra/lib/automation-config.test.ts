// Webhook mappings and schedules live in one config item of the job table, written at deploy, not in
// environment variables: 200 mappings synthesize with every function within Lambda's 4 KB, and the
// webhooks and api functions (their real handlers, on DynamoDB Local, fauxqs and the Secrets Manager stand-in) read
// the item the template writes and serves the 200th mapping and every schedule. A config too large
// for the item, or a schedule name too long for EventBridge Scheduler, stops synthesis naming it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTOMATION_CONFIG_MAX_BYTES } from '../../../infra/lib/automation-config';
import { environmentBytes, LAMBDA_ENVIRONMENT_MAX_BYTES } from '../../../infra/lib/pipeline-function';
import { type AwsEmulators, startAwsEmulators } from '../../../scripts/emulators/aws-emulators';
import { lambdaContext } from '../../../scripts/lambda/lambda-events';
import { automationConfigPut, functionVariables } from '../support/automation-config-item';
import { type SynthesizedStage, synthStage } from '../support/synth-stage';

const SOURCES = 200;
const SCHEDULES = 20;

function writeConfig(config: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'opflow-config-item-')), 'opflow.config.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** `count` webhook mappings of a realistic size (about 260 bytes each) and `schedules` schedules. */
function bigConfig(count: number, schedules: number): string {
  const webhooks = Object.fromEntries(
    Array.from({ length: count }, (_, i) => [
      `tracker-${String(i).padStart(3, '0')}`,
      {
        workflow: 'patent-count',
        tenant: 'default',
        input: { query: { $from: '/issue/fields/summary' }, title: { $from: '/issue/key' } },
        label: { $from: '/issue/key' },
      },
    ]),
  );
  return writeConfig({
    webhooks,
    schedules: Array.from({ length: schedules }, (_, i) => ({
      name: `weekly-${i}`,
      cron: `${i} 6 * * 1`,
      timezone: 'Europe/Berlin',
      workflow: 'patent-count',
      input: { query: `TTL:(battery ${i})` },
    })),
  });
}

let synth: SynthesizedStage;
let emulators: AwsEmulators | undefined;
beforeAll(() => {
  synth = synthStage({ stage: 'dev', opflowConfig: bigConfig(SOURCES, SCHEDULES) }, { bundle: false });
});
afterAll(async () => {
  await emulators?.stop();
});

describe('the automation config item', { timeout: 180_000 }, () => {
  it('keeps 200 webhook mappings and 20 schedules out of every environment', () => {
    const functions = synth.template.findResources('AWS::Lambda::Function');
    for (const [id, fn] of Object.entries(functions)) {
      const variables = fn['Properties']['Environment']?.['Variables'] ?? {};
      expect(Object.keys(variables), id).not.toContain('OPFLOW_WEBHOOK_MAPPINGS');
      expect(Object.keys(variables), id).not.toContain('OPFLOW_SCHEDULES');
      expect(environmentBytes(variables).total, id).toBeLessThanOrEqual(LAMBDA_ENVIRONMENT_MAX_BYTES);
    }
    const put = automationConfigPut(synth.template);
    expect(put.Item.PK.S).toBe('CONFIG');
    expect(functionVariables(synth.template, 'opflow-dev-api')['OPFLOW_AUTOMATION_CONFIG']).toBe(
      put.Item.SK.S,
    );
    const body = JSON.parse(put.Item.body.S) as { webhooks: object; schedules: unknown[] };
    expect(Object.keys(body.webhooks)).toHaveLength(SOURCES);
    expect(body.schedules).toHaveLength(SCHEDULES);
    // The api function may read the config item and nothing else of PK = CONFIG is needed.
    const apiRole = synth.stack.getLogicalId(synth.stack.api.role.node.defaultChild as never);
    const statements = Object.values(synth.template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p['Properties']['Roles']) === JSON.stringify([{ Ref: apiRole }]))
      .flatMap((p) => p['Properties']['PolicyDocument']['Statement'] as { Condition?: unknown }[]);
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: 'dynamodb:GetItem',
        Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['CONFIG'] } },
      }),
    );
  });

  it("serves the 200th mapping (the webhooks function's handler) and every schedule (the api's) from the item the template writes", async () => {
    emulators = await startAwsEmulators();
    const table = await emulators.createTable();
    const { queueUrl } = emulators.createQueue();
    const bucket = emulators.createBucket();
    // What the Custom::OpflowAutomationConfig resource does at deploy.
    await emulators.clients.dynamoDb.send(new PutItemCommand(automationConfigPut(synth.template, table)));
    const secret = `whsec_${Buffer.from('opflow-config-item-test-key-0123').toString('base64')}`;
    emulators.secretsManager!.setSecret('opflow-dev/webhook/tracker-199', secret);
    const variables = functionVariables(synth.template, 'opflow-dev-webhooks');
    // Both functions read the one config item.
    expect(functionVariables(synth.template, 'opflow-dev-api')['OPFLOW_AUTOMATION_CONFIG']).toBe(
      variables['OPFLOW_AUTOMATION_CONFIG'],
    );
    Object.assign(process.env, emulators.environment(), {
      OPFLOW_TABLE_NAME: table,
      OPFLOW_QUEUE_URL: queueUrl,
      OPFLOW_BUCKET_NAME: bucket,
      OPFLOW_API_KEY_SECRET_PREFIX: 'opflow-dev/api-key/',
      OPFLOW_WEBHOOK_SECRET_PREFIX: variables['OPFLOW_WEBHOOK_SECRET_PREFIX'],
      OPFLOW_AUTOMATION_CONFIG: variables['OPFLOW_AUTOMATION_CONFIG'],
      POWERTOOLS_METRICS_DISABLED: 'true',
    });
    type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;
    const api = ((await import('../../../functions/api/handler')) as { handler: Handler }).handler;
    const webhooks = ((await import('../../../functions/webhooks/handler')) as { handler: Handler }).handler;
    const call = async (method: string, path: string, body = '', headers: Record<string, string> = {}) =>
      (await (path.startsWith('/webhooks/') ? webhooks : api)(
        {
          rawPath: path,
          headers: { 'content-type': 'application/json', ...headers },
          body,
          isBase64Encoded: false,
          requestContext: { requestId: `req-${Math.random()}`, http: { method } },
        } as unknown as APIGatewayProxyEventV2,
        lambdaContext('opflow-dev-api', 10_000),
      )) as { statusCode: number; body: string };

    const body = JSON.stringify({ issue: { key: 'IP-199', fields: { summary: 'solid-state battery' } } });
    const at = new Date();
    const answer = await call('POST', '/webhooks/tracker-199', body, {
      'webhook-id': 'msg_config_item_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('msg_config_item_1', at, body),
    });
    expect(answer.statusCode).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ created: true, jobId: expect.any(String) });
    // A source that is not in the config: 404, not a job.
    expect((await call('POST', '/webhooks/tracker-200', body)).statusCode).toBe(404);

    const listed = await call('GET', '/schedules');
    expect(listed.statusCode).toBe(200);
    const names = (JSON.parse(listed.body) as { schedules: { name: string }[] }).schedules.map((s) => s.name);
    expect(names).toHaveLength(SCHEDULES);
    expect(names).toContain('weekly-19');
  });

  it('refuses at synth a config too large for the item, naming the file and what is large', () => {
    const file = writeConfig({
      webhooks: Object.fromEntries(
        Array.from({ length: 25 }, (_, i) => [
          `source-${i}`,
          { workflow: 'patent-count', input: { query: 'x'.repeat(10_000) } },
        ]),
      ),
    });
    expect(() => synthStage({ stage: 'dev', opflowConfig: file }, { bundle: false })).toThrow(
      new RegExp(
        `opflow.config.json: the webhook mappings \\(\\d+ bytes\\) and schedules \\(2 bytes\\) take \\d+ bytes as JSON, over the ${AUTOMATION_CONFIG_MAX_BYTES}`,
      ),
    );
  });

  it('refuses at synth a schedule whose name is too long for EventBridge Scheduler, naming the entry', () => {
    const file = writeConfig({
      schedules: [
        { name: 'ok', cron: '0 6 * * 1', workflow: 'patent-count', input: { query: 'x' } },
        { name: 'n'.repeat(60), cron: '0 6 * * 1', workflow: 'patent-count', input: { query: 'x' } },
      ],
    });
    expect(() => synthStage({ stage: 'dev', opflowConfig: file }, { bundle: false })).toThrow(
      /schedules\[1\]\.name: "n{60}" makes the schedule name opflow-dev-n{60} \(71 characters\), over EventBridge Scheduler's 64: keep it to 53 characters/,
    );
  });
});
