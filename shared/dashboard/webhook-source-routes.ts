/**
 * `GET /webhook-sources`: the webhook sources of opflow.config.json with their state (open, or
 * capped with the reason and when they reopen), caps, the last 24 hours' spend and last delivery
 * (shared/http/webhook-sources.ts). A framework-free route of the job API on `opflow serve` and the
 * Lambda api, for the dashboard's Webhooks page and the MCP tool; a caller bound to a tenant sees
 * only the sources whose jobs are that tenant's. A source known only by its signing secret is listed
 * too (`secretSources` locally; on the api, one with a recorded delivery). The view is loaded on first
 * use (the api's bundle).
 */
import type { WebhookSource } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import type { WebhookDeliveryLog } from '../engine/webhook-deliveries';
import { type ApiRoute, apiRoute, json } from '../http/job-api';

export function webhookSourceRoutes(options: {
  deps: Pick<JobDeps, 'store' | 'clock'>;
  webhooks: Readonly<Record<string, WebhookSource>>;
  deliveries: WebhookDeliveryLog;
  /** The sources known only by their signing secret, where the secrets can be listed (locally). */
  secretSources?: readonly string[] | undefined;
}): ApiRoute[] {
  return [
    apiRoute('listWebhookSources', async (_params, _request, { tenant }) => {
      const { webhookSourceViews } = await import('../http/webhook-sources');
      const sources = await webhookSourceViews(options.deps, options.webhooks, {
        tenant,
        deliveries: options.deliveries,
        secretSources: options.secretSources,
      });
      return json(200, { sources });
    }),
  ];
}
