// Webhooks and schedules on the aws backend, on the emulators with the bundled functions: POST /webhooks/{source}
// through the api function (no IAM: the Standard Webhooks signature over the raw body bytes, the
// secret read from Secrets Manager), and scheduled jobs created by the `schedules` function (the
// EventBridge Scheduler target) whose reports, written by the step worker to S3, say what changed
// since the schedule's previous run.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../../scripts/lambda/lambda-events';
import { reportKeys } from '../../../shared/engine/report';
import { answerSchemas } from '../../../shared/http/answer-schemas';
import { freshFetch } from '../../support/fresh-fetch';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

const webhookPrefix = 'opflow/e2e/webhook/';
const secret = `whsec_${randomBytes(24).toString('base64')}`;
const saved: Record<string, string | undefined> = {};
let world: AwsWorld;

beforeAll(async () => {
  // Read by the api function when its bundle loads (the stack sets them from opflow.config.json).
  const env = {
    OPFLOW_WEBHOOK_SECRET_PREFIX: webhookPrefix,
    OPFLOW_WEBHOOK_MAPPINGS: JSON.stringify({
      tracker: {
        workflow: 'patent-count',
        input: { query: { $from: '/issue/title' } },
        label: { $from: '/issue/key' },
      },
    }),
  };
  for (const [name, value] of Object.entries(env)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  world = await AwsWorld.start({ workers: 1 });
  world.emulators.secretsManager!.setSecret(`${webhookPrefix}tracker`, secret);
}, REAL_PROCESS_TIMEOUT_MS);

afterAll(async () => {
  await world?.stop();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** POSTs `body` (bytes exactly as given) to the webhook route through the gateway. */
async function deliver(source: string, body: Buffer, headers: Record<string, string>) {
  const response = await freshFetch(`${world.gateway.url}/webhooks/${source}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function signed(id: string, body: Buffer, key = secret): Record<string, string> {
  const at = new Date(world.now());
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign(id, at, body.toString('utf8')),
  };
}

describe('opflow on AWS: webhooks and scheduled reports', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('accepts a signed webhook (raw body intact), refuses a bad signature, answers a replay with the same job', async () => {
    // Bytes a JSON re-serialisation would change: indentation, CRLF, escapes, non-ASCII.
    const body = Buffer.from(
      '{\r\n  "issue" : {"key": "IP-7",\t"title": "TTL:(Festkörper\\u002dbatterie) — ñ 電池"}  }\r\n',
      'utf8',
    );
    const headers = signed('msg_e2e_1', body);
    const accepted = await deliver('tracker', body, headers);
    expect(accepted).toEqual({
      status: 202,
      body: expect.objectContaining({ jobId: expect.any(String), created: true }),
    });
    const jobId = accepted.body['jobId'] as string;
    const [job] = await world.settle([jobId]);
    expect(job).toMatchObject({ status: 'SUCCEEDED', source: 'webhook', label: 'IP-7' });
    expect(job!.input).toEqual({ inline: { query: 'TTL:(Festkörper-batterie) — ñ 電池' } });
    // The job ran: its report is in S3.
    expect(await world.reports.get(reportKeys(jobId).result)).toBeDefined();

    // The same delivery again (a sender's retry): the same job, nothing new.
    const replay = await deliver('tracker', body, headers);
    expect(replay).toEqual({ status: 202, body: expect.objectContaining({ jobId, created: false }) });

    // One byte changed after signing: 401, no job.
    const tampered = Buffer.from(body);
    tampered[tampered.length - 4] = 0x09; // a space becomes a tab: still valid JSON
    const refused = await deliver('tracker', tampered, signed('msg_e2e_2', body));
    expect(refused.status).toBe(401);
    // Signed with another key: 401 too.
    const otherKey = `whsec_${randomBytes(24).toString('base64')}`;
    expect((await deliver('tracker', body, signed('msg_e2e_3', body, otherKey))).status).toBe(401);
    // No signature at all: 401; an unknown source: 404.
    expect((await deliver('tracker', body, {})).status).toBe(401);
    expect((await deliver('nobody', body, signed('msg_e2e_4', body))).status).toBe(404);
    const webhookJobs = (await world.store.list({ limit: 100 })).jobs.filter((j) => j.source === 'webhook');
    expect(webhookJobs.map((j) => j.id)).toEqual([jobId]);
  });

  it("lists the webhook source's state through the api function (GET /webhook-sources): open, its last delivery, no secret", async () => {
    // After the deliveries above: the api function reads the sources as the webhooks function does.
    const answer = await world.api('GET', '/webhook-sources');
    expect(answer.status).toBe(200);
    const { sources } = answerSchemas.webhookSources.parse(answer.body);
    expect(sources).toEqual([
      expect.objectContaining({
        name: 'tracker',
        tenant: 'default',
        workflow: 'patent-count',
        state: 'open',
      }),
    ]);
    expect(sources[0]!.reason).toBeUndefined();
    expect(sources[0]!.lastDelivery).toMatchObject({ status: expect.any(Number) });
    expect(sources[0]!.caps).toMatchObject({ jobsLast24h: 1, spentLast24h: expect.any(Number) });
    expect(JSON.stringify(answer.body)).not.toContain(secret.slice(6));
  });

  it('writes each scheduled report with what changed since the previous run (the schedules function as target)', async () => {
    const target = (
      await world.bundles.load<{ handler: (event: unknown, context: unknown) => Promise<unknown> }>(
        'schedules',
      )
    ).handler;
    const schedule = {
      name: 'battery-count',
      cron: '0 6 * * *',
      timezone: 'Europe/Berlin',
      workflow: 'patent-count',
      input: { query: 'TTL:(solid-state battery)', title: 'Solid-state batteries' },
    };
    const fire = async (slot: string) => {
      const answer = (await target({ schedule, slot }, lambdaContext('opflow-schedules', 30_000))) as {
        outcomes: { jobId: string }[];
      };
      const [job] = await world.settle([answer.outcomes[0]!.jobId]);
      expect(job?.status).toBe('SUCCEEDED');
      const text = async (key: string) => Buffer.from((await world.reports.get(key))!.body).toString('utf8');
      const keys = reportKeys(job!.id);
      return {
        job: job!,
        result: JSON.parse(await text(keys.result)) as Record<string, unknown>,
        markdown: await text(keys.markdown),
        html: await text(keys.html),
      };
    };
    const first = await fire('2026-01-05T05:00:00Z');
    expect(first.result['changes']).toMatchObject({ schedule: 'battery-count', first: true });
    expect(first.markdown).toContain('## Changes since the previous run');
    const second = await fire('2026-01-06T05:00:00Z');
    expect(second.result['changes']).toMatchObject({
      first: false,
      previous: { jobId: first.job.id, slot: '2026-01-05T05:00:00.000Z' },
      counts: [{ name: 'Solid-state batteries', delta: 0 }],
      series: [
        { name: 'Solid-state batteries', points: [{ jobId: first.job.id }, { jobId: second.job.id }] },
      ],
    });
    expect(second.markdown).toContain('## Changes since 2026-01-05 05:00 UTC');
    expect(second.html).toMatch(/<svg [^>]*role="img"/);
  });
});
