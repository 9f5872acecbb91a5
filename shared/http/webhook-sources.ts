/**
 * The webhook sources of opflow.config.json as people see them (`opflow webhooks`): each source's
 * workflow and tenant, its cost caps and what its jobs of the last 24 hours were billed, and its
 * state: `open`, or `capped` while that spend is at its `maxUnitsPerDay`. A capped source answers
 * each delivery 429 `cost-cap` with a Retry-After and records it (GET /webhook-deliveries, the
 * dashboard's Webhooks page); it takes deliveries again by itself once the 24 hours' spend is below
 * the cap (`resumesAt`, if nothing more is billed), or at once when the cap is raised in the file.
 */
import type { WebhookSource } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import { type CapFigures, capFigures, dayCapFreesAt } from '../schedules/cost-cap';
import { webhookSourceSpend } from './webhooks';

export interface WebhookSourceView {
  name: string;
  tenant: string;
  /** The workflow it starts, `from the payload` when the payload names it. */
  workflow: string;
  state: 'open' | 'capped';
  /** Why it is capped: the figures, and how it resumes. */
  reason?: string | undefined;
  /** When a capped source takes deliveries again if nothing more is billed (ISO). */
  resumesAt?: string | undefined;
  caps?: CapFigures | undefined;
}

export async function webhookSourceView(
  deps: Pick<JobDeps, 'store' | 'clock'>,
  name: string,
  source: WebhookSource,
): Promise<WebhookSourceView> {
  const tenant = source.tenant;
  const workflow = typeof source.workflow === 'string' ? source.workflow : 'from the payload';
  const caps = { maxUnitsPerRun: source.maxUnitsPerRun, maxUnitsPerDay: source.maxUnitsPerDay };
  if (caps.maxUnitsPerRun === undefined && caps.maxUnitsPerDay === undefined)
    return { name, tenant, workflow, state: 'open' };
  const now = deps.clock.now();
  const spent = await webhookSourceSpend(deps, tenant, name, now);
  const figures = capFigures(caps, spent);
  const cap = caps.maxUnitsPerDay;
  if (cap === undefined || spent.units < cap) return { name, tenant, workflow, state: 'open', caps: figures };
  const frees = dayCapFreesAt(spent, cap);
  const resumesAt = frees === undefined ? undefined : new Date(frees).toISOString();
  return {
    name,
    tenant,
    workflow,
    state: 'capped',
    reason: `day cost cap reached: its ${spent.jobs} job(s) of the last 24 hours were billed ${spent.units} units, maxUnitsPerDay is ${cap}; deliveries are answered 429 cost-cap (with Retry-After) and recorded, and start no job. It takes deliveries again by itself${resumesAt ? ` at ${resumesAt}` : ''} once the 24 hours' spend is below the cap, or at once when maxUnitsPerDay of webhooks.${name} is raised in opflow.config.json`,
    resumesAt,
    caps: figures,
  };
}
