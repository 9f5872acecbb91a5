// The webhook sources as people see them (GET /webhook-sources, opflow webhooks, the dashboard):
// besides those of opflow.config.json, a source known only by its signing secret is listed, open,
// in the tenant `default`, with its spend and last delivery: locally the sources of the
// OPFLOW_WEBHOOK_SECRET_* variables, where the secrets cannot be listed (the aws api) those with a
// recorded delivery. Real SQLite store and delivery log.
import { ulid } from 'ulid';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseOpflowConfig } from '../../../shared/config/opflow-config';
import type { WebhookDeliveryLog } from '../../../shared/engine/webhook-deliveries';
import { answerSchemas } from '../../../shared/http/answer-schemas';
import { localSecretSources, webhookSourceViews } from '../../../shared/http/webhook-sources';
import { localEngine, type TestEngine } from '../../support/engines';
import { makeJob } from '../../support/factories';

const T0 = Date.UTC(2026, 10, 28, 9, 0, 0);

let engine: TestEngine;
let deliveries: WebhookDeliveryLog;
beforeEach(async () => {
  engine = await localEngine({ clock: { now: () => T0 } });
  deliveries = await engine.backend.webhookDeliveries();
});
afterEach(() => engine.close());

const { webhooks } = parseOpflowConfig(
  {
    webhooks: {
      'my-hook': { workflow: 'patent-count', input: { query: { $from: '/q' } }, tenant: 'acme' },
      watch: { workflow: 'patent-count', input: { query: 'TTL:(hinge)' }, maxUnitsPerDay: 5 },
    },
  },
  'opflow.config.json',
);

/** A delivery of `source` a minute before T0 (and its job's 3 billed units, when it started one). */
async function delivered(source: string, id: string, tenant = 'default') {
  const job = makeJob({
    tenant,
    source: 'webhook',
    idempotencyKey: `webhook:${source}:${id}`,
    status: 'SUCCEEDED',
    usage: { ...makeJob().usage, billedUnits: 3 },
    createdAt: T0 - 60_000,
    updatedAt: T0 - 60_000,
  });
  await engine.local.store.create(job);
  await deliveries.record({
    id: ulid(T0 - 60_000),
    source,
    webhookId: id,
    at: T0 - 60_000,
    status: 202,
    jobId: job.id,
    created: true,
    tenant,
  });
  return job;
}

describe('webhook sources known only by their signing secret', () => {
  it('are the OPFLOW_WEBHOOK_SECRET_* variables set locally, by the name their deliveries are recorded under', () => {
    expect(
      localSecretSources({
        OPFLOW_WEBHOOK_SECRET_PLAIN_HOOK: 'whsec_x',
        OPFLOW_WEBHOOK_SECRET_MY_HOOK: 'whsec_y',
        OPFLOW_WEBHOOK_SECRET_EMPTY: '  ',
        OPFLOW_WEBHOOK_SECRET_PREFIX: 'opflow/webhook/',
        'OPFLOW_WEBHOOK_SECRET_NOT.A.NAME': 'whsec_z',
        OPFLOW_CALLBACK_SECRET: 'whsec_w',
      }),
    ).toEqual(['my_hook', 'plain_hook']);
  });

  it('are listed locally beside the file’s sources: open, tenant default, their spend and last delivery', async () => {
    const job = await delivered('plain_hook', 'm1');
    // A source whose secret is gone is no source any more, whatever it was sent before.
    await delivered('gone', 'm2');
    const secretSources = localSecretSources({
      OPFLOW_WEBHOOK_SECRET_PLAIN_HOOK: 'whsec_x',
      // The secret of the file's my-hook ("-" and "_" read the same): not a second source.
      OPFLOW_WEBHOOK_SECRET_MY_HOOK: 'whsec_y',
    });
    const sources = await webhookSourceViews(engine.deps, webhooks, { deliveries, secretSources });
    // What GET /webhook-sources answers, as its OpenAPI document says.
    answerSchemas.webhookSources.parse({ sources });
    expect(sources.map((source) => [source.name, source.origin, source.state])).toEqual([
      ['my-hook', 'config', 'open'],
      ['plain_hook', 'secret', 'open'],
      ['watch', 'config', 'open'],
    ]);
    expect(sources[1]).toEqual({
      name: 'plain_hook',
      origin: 'secret',
      tenant: 'default',
      workflow: 'from the payload',
      state: 'open',
      caps: { spentLast24h: 3, jobsLast24h: 1 },
      lastDelivery: { at: new Date(T0 - 60_000).toISOString(), status: 202, webhookId: 'm1', jobId: job.id },
    });
    // A caller bound to a tenant sees the sources of its tenant only.
    const names = async (tenant: string) =>
      (await webhookSourceViews(engine.deps, webhooks, { tenant, deliveries, secretSources })).map(
        (source) => source.name,
      );
    expect(await names('acme')).toEqual(['my-hook']);
    expect(await names('default')).toEqual(['plain_hook', 'watch']);
  });

  it('are those with a recorded delivery where the secrets cannot be listed (the aws api)', async () => {
    await delivered('watch', 'w1');
    await delivered('tracker', 't1');
    const sources = await webhookSourceViews(engine.deps, webhooks, { deliveries });
    answerSchemas.webhookSources.parse({ sources });
    expect(sources.map((source) => [source.name, source.origin, source.state])).toEqual([
      ['my-hook', 'config', 'open'],
      ['tracker', 'secret', 'open'],
      ['watch', 'config', 'open'],
    ]);
    expect(sources[1]!.lastDelivery).toMatchObject({ status: 202, webhookId: 't1' });
    expect(sources[1]!.caps.spentLast24h).toBe(3);
    // Without the delivery log, only the file's.
    expect((await webhookSourceViews(engine.deps, webhooks)).map((source) => source.name)).toEqual([
      'my-hook',
      'watch',
    ]);
  });
});
