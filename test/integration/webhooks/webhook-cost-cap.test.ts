// A webhook source's maxUnitsPerDay on the real local backend (SQLite): once its jobs of the last 24
// hours were billed that much, new deliveries are refused (429 cost-cap, the figures in the message);
// a repeated delivery of an existing job still answers it; other sources are not affected.
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalBackend } from '../../../shared/backends/local';
import { ConfigFileError, parseOpflowConfig } from '../../../shared/config/opflow-config';
import { createWebhookHandler } from '../../../shared/http/webhooks';
import { ManualClock } from '../../../shared/runtime/time';
import { workflows } from '../../../shared/workflows';
import { localEngine, type TestEngine } from '../../support/engines';

const secret = `whsec_${Buffer.from('the signing secret of the tracker').toString('base64')}`;
const config = (webhooks: Record<string, unknown>) =>
  parseOpflowConfig({ webhooks }, 'opflow.config.json', new Set(workflows.keys()));
const source = (extra: Record<string, unknown> = {}) => ({
  workflow: 'patent-count',
  input: { query: { $from: '/q' } },
  ...extra,
});

let engine: TestEngine;
let local: LocalBackend;
let clock: ManualClock;
let handler: ReturnType<typeof createWebhookHandler>;

beforeEach(async () => {
  clock = new ManualClock(Date.now());
  engine = await localEngine({ clock });
  local = engine.local;
  handler = createWebhookHandler({
    deps: engine.deps,
    config: config({ tracker: source({ maxUnitsPerDay: 100 }), other: source() }),
    secrets: { get: async () => secret, refresh: async () => secret },
  });
});
afterEach(() => engine.close());

async function deliver(to: string, id: string, query = 'battery') {
  const body = JSON.stringify({ q: query });
  const at = new Date(clock.now());
  const response = await handler({
    source: to,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    },
    body: new TextEncoder().encode(body),
  });
  return { status: response.status, json: JSON.parse(response.body), headers: response.headers ?? {} };
}

async function bill(jobId: string, units: number) {
  const job = (await local.store.get(jobId))!;
  await local.store.commit(
    { ...job, status: 'SUCCEEDED', usage: { ...job.usage, billedUnits: units }, version: job.version + 1 },
    job.version,
  );
}

describe("a webhook source's maxUnitsPerDay", () => {
  it('refuses new deliveries once the last 24 hours reach the cap, and takes them again after', async () => {
    const first = await deliver('tracker', 'msg_1');
    expect(first.status).toBe(202);
    // Each job may spend what is left of the day: a job in progress stops at its next step there.
    expect((await local.store.get(first.json.jobId))?.maxUnits).toBe(100);
    await bill(first.json.jobId, 60);
    const second = await deliver('tracker', 'msg_2');
    expect(second.status).toBe(202);
    expect((await local.store.get(second.json.jobId))?.maxUnits).toBe(40);
    await bill(second.json.jobId, 45);

    const refused = await deliver('tracker', 'msg_3');
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('cost-cap');
    // Both jobs started now: once they are 24 hours old the spend is below the cap again.
    const frees = new Date(clock.now() + 24 * 60 * 60_000).toISOString();
    expect(refused.json.error.message).toBe(
      `cost cap reached: the 2 job(s) of source tracker of the last 24 hours were billed 105 units, maxUnitsPerDay is 100; deliveries start jobs again once the last 24 hours' spend is below it (at ${frees} if nothing more is billed); this delivery is recorded but starts no job: send it again then, or raise maxUnitsPerDay of webhooks.tracker in opflow.config.json`,
    );
    // The sender is told when to try again.
    expect(refused.headers['retry-after']).toBe(String(24 * 60 * 60));
    // The second job carries the day cap it was given, to name it if it stops there.
    expect((await local.store.get(second.json.jobId))?.costCap).toEqual({
      owner: 'webhook source',
      name: 'tracker',
      maxUnitsPerDay: 100,
      spentToday: 60,
      dayFreesAt: clock.now() + 24 * 60 * 60_000,
    });
    // A repeated delivery answers its job; another source is not capped.
    const again = await deliver('tracker', 'msg_2');
    expect(again).toMatchObject({ status: 202, json: { jobId: second.json.jobId, created: false } });
    expect((await deliver('other', 'msg_9')).status).toBe(202);
    expect((await local.store.list({ limit: 100 })).jobs).toHaveLength(3);

    clock.advance(24 * 60 * 60_000 + 1);
    expect((await deliver('tracker', 'msg_4')).status).toBe(202);
  });

  it('refuses a cap that is not a positive whole number, naming the field', () => {
    expect(() => config({ tracker: source({ maxUnitsPerDay: 0 }) })).toThrow(ConfigFileError);
    expect(() => config({ tracker: source({ maxUnitsPerDay: 2.5 }) })).toThrow(
      /webhooks\.tracker\.maxUnitsPerDay: must be a whole number/,
    );
  });
});

describe("a webhook source's maxUnitsPerRun", () => {
  it('gives each job it starts the cap; other sources’ jobs have none', async () => {
    handler = createWebhookHandler({
      deps: engine.deps,
      config: config({ tracker: source({ maxUnitsPerRun: 25 }), other: source() }),
      secrets: { get: async () => secret, refresh: async () => secret },
    });
    const capped = await deliver('tracker', 'msg_run_1');
    expect(capped.status).toBe(202);
    expect((await local.store.get(capped.json.jobId))?.maxUnits).toBe(25);
    const free = await deliver('other', 'msg_run_2');
    expect((await local.store.get(free.json.jobId))?.maxUnits).toBeUndefined();
    expect(() => config({ tracker: source({ maxUnitsPerRun: 0 }) })).toThrow(
      /webhooks\.tracker\.maxUnitsPerRun: must be more than 0/,
    );
  });
});
