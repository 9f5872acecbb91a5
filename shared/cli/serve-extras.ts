/**
 * What `opflow serve` runs beside the job API from the config file (opflow.config.json): the
 * webhook route and the schedules. Loaded and validated before the server starts, so a wrong
 * config stops `opflow serve` with the file and field named.
 */

import { callbackPolicyFromEnv } from '../callbacks/ssrf-guard';
import { ConfigFileError, loadOpflowConfig, type OpflowConfig } from '../config/opflow-config';
import type { WebhookDeliveryLog } from '../engine/webhook-deliveries';
import type { ServerMount } from '../http/node-server';
import { webhookMount } from '../http/webhook-mount';
import { createWebhookHandler, envWebhookSecrets } from '../http/webhooks';
import type { Backend } from '../runtime/backend';
import { startScheduleLoop } from '../schedules/loop';
import type { CliContext } from './context';
import { CliError, ExitCode } from './exit-codes';

export interface ServeExtras {
  config: OpflowConfig;
  file: string | undefined;
  mounts: ServerMount[];
  /** The record of webhook deliveries the webhook route writes (`GET /webhook-deliveries`). */
  deliveries: WebhookDeliveryLog;
  start(): void;
  stop(): Promise<void>;
  lines(): string[];
}

/** Reads the config file of a command (`--config`, OPFLOW_CONFIG, ./opflow.config.json). */
export async function readConfigFile(ctx: CliContext, explicit: string | undefined) {
  try {
    return await loadOpflowConfig({
      explicit,
      env: ctx.io.env,
      cwd: ctx.io.cwd,
      workflows: ctx.workflows,
      callbackPolicy: callbackPolicyFromEnv(ctx.io.env),
    });
  } catch (error) {
    if (error instanceof ConfigFileError) throw new CliError(error.message, ExitCode.usage);
    throw error;
  }
}

export async function prepareServeExtras(
  ctx: CliContext,
  backend: Backend,
  loaded: { config: OpflowConfig; file: string | undefined },
  say: (line: string) => void = () => undefined,
): Promise<ServeExtras> {
  const env = ctx.io.env;
  const deliveries = await backend.webhookDeliveries();
  const handler = createWebhookHandler({
    deps: backend.deps,
    config: loaded.config,
    deliveries,
    secrets: envWebhookSecrets(env),
  });
  const states = await backend.scheduleStates();
  let loop: { stop(): Promise<void> } | undefined;
  return {
    ...loaded,
    mounts: [webhookMount(handler, loaded.config)],
    deliveries,
    start() {
      loop = startScheduleLoop(backend.deps, states, loaded.config.schedules, (outcome) =>
        say(
          `schedule ${outcome.schedule} slot ${new Date(outcome.slot).toISOString()}: ${
            outcome.outcome === 'fired'
              ? `job ${outcome.jobId}${outcome.created ? '' : ' (already there)'}`
              : outcome.outcome === 'skipped'
                ? `skipped (${outcome.reason})`
                : 'held back until the running job ends'
          }`,
        ),
      );
    },
    async stop() {
      await loop?.stop();
    },
    lines() {
      const sources = Object.keys(loaded.config.webhooks);
      const schedules = loaded.config.schedules;
      return [
        ...(schedules.length > 0
          ? [
              `schedules: ${schedules.map((s) => `${s.name}${s.paused ? ' (paused in the config)' : ''}`).join(', ')} (opflow schedules lists them)`,
            ]
          : []),
        `webhooks at /webhooks/{source}${sources.length ? ` (mapped: ${sources.join(', ')})` : ''}; a source needs OPFLOW_WEBHOOK_SECRET_<SOURCE>`,
      ];
    },
  };
}
