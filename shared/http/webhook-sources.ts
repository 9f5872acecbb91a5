/**
 * The webhook sources of opflow.config.json as people see them (`opflow webhooks`, `GET
 * /webhook-sources`, the MCP tool `list_webhook_sources`, the dashboard's Webhooks page): each
 * source's workflow and tenant, its cost caps and what its jobs of the last 24 hours were billed, its
 * last delivery, and its state: `open`, or `capped` while that spend is at its `maxUnitsPerDay`. A
 * capped source answers each delivery 429 `cost-cap` with a Retry-After and records it (GET
 * /webhook-deliveries); it takes deliveries again by itself once the 24 hours' spend is below the cap
 * (`resumesAt`, if nothing more is billed), or at once when the cap is raised in the file.
 *
 * A source known only by its signing secret (no entry under `webhooks` in the file: its payload is a
 * job request, its jobs the tenant `default`'s, no caps) is listed too, with `origin: "secret"`:
 * locally those of the OPFLOW_WEBHOOK_SECRET_<SOURCE> variables (`secretSources`); where the secrets
 * cannot be listed (the aws api function does not read Secrets Manager) those with a delivery among
 * the newest `deliveryWalk` recorded (only a source with a secret has its deliveries recorded).
 *
 * Nothing of a source's settings but its name, tenant, workflow name and caps is shown: no signing
 * secret (never read here), no callback URL, no input template (either may hold a credential).
 */
import { type WebhookSource, webhookSourceSchema } from '../config/opflow-config';
import type { JobDeps } from '../engine/deps';
import type { WebhookDeliveryLog } from '../engine/webhook-deliveries';
import { type CapFigures, capFigures, type DaySpend, dayCapFreesAt, dayMs } from '../schedules/cost-cap';
import { webhookSourcePattern } from './request-schemas';

/** What a delivery to the source was answered, the newest recorded. */
export interface LastDelivery {
  at: string;
  status: number;
  webhookId?: string | undefined;
  jobId?: string | undefined;
  error?: { code: string; message: string } | undefined;
}

export interface WebhookSourceView {
  name: string;
  /** `config`: declared under `webhooks` in opflow.config.json; `secret`: known only by its signing secret. */
  origin: 'config' | 'secret';
  tenant: string;
  /** The workflow it starts, `from the payload` when the payload names it. */
  workflow: string;
  state: 'open' | 'capped';
  /** Why it is capped: the figures, and how it resumes. */
  reason?: string | undefined;
  /** When a capped source takes deliveries again if nothing more is billed (ISO). */
  resumesAt?: string | undefined;
  /** Its caps (if any) and what its jobs of the last 24 hours were billed. */
  caps: CapFigures;
  /** Its newest recorded delivery (of the newest `deliveryWalk` recorded, kept 30 days). */
  lastDelivery?: LastDelivery | undefined;
}

/** How many of the newest recorded deliveries are looked through for each source's last one. */
export const deliveryWalk = 1000;

/**
 * The billed units of each source's jobs created in the 24 hours before `now`: one pass over the
 * tenant's jobs, newest first (a source's jobs have the idempotency key `webhook:<name>:<id>`).
 */
async function spendBySource(
  deps: Pick<JobDeps, 'store'>,
  tenant: string,
  names: readonly string[],
  now: number,
): Promise<Map<string, DaySpend>> {
  const spends = new Map(names.map((name) => [name, { units: 0, jobs: 0, billed: [] } as DaySpend]));
  const since = now - dayMs;
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const listed = await deps.store.list({ tenant, limit: 200, cursor });
    for (const job of listed.jobs) {
      if (job.createdAt < since) return spends;
      if (job.source !== 'webhook') continue;
      const name = /^webhook:([^:]+):/.exec(job.idempotencyKey ?? '')?.[1];
      const spend = name === undefined ? undefined : spends.get(name);
      if (!spend) continue;
      spend.units += job.usage.billedUnits;
      spend.jobs += 1;
      if (job.usage.billedUnits > 0) spend.billed.push({ at: job.createdAt, units: job.usage.billedUnits });
    }
    cursor = listed.cursor;
    if (cursor === undefined) break;
  }
  return spends;
}

/**
 * Each source's newest delivery among the newest `deliveryWalk` recorded (of `tenant`'s, if bound):
 * of the sources `names`, or of every source recorded when `names` is undefined.
 */
async function lastDeliveries(
  deliveries: WebhookDeliveryLog,
  tenant: string | undefined,
  names: readonly string[] | undefined,
): Promise<Map<string, LastDelivery>> {
  const found = new Map<string, LastDelivery>();
  const wanted = names && new Set(names);
  let cursor: string | undefined;
  for (let seen = 0; seen < deliveryWalk && (wanted === undefined || found.size < wanted.size); ) {
    const page = await deliveries.list({ tenant, limit: 100, cursor });
    for (const delivery of page.deliveries) {
      if ((wanted && !wanted.has(delivery.source)) || found.has(delivery.source)) continue;
      found.set(delivery.source, {
        at: new Date(delivery.at).toISOString(),
        status: delivery.status,
        ...(delivery.webhookId === undefined ? {} : { webhookId: delivery.webhookId }),
        ...(delivery.jobId === undefined ? {} : { jobId: delivery.jobId }),
        ...(delivery.error === undefined ? {} : { error: delivery.error }),
      });
    }
    seen += 100;
    cursor = page.cursor;
    if (cursor === undefined) break;
  }
  return found;
}

function viewOf(
  name: string,
  origin: WebhookSourceView['origin'],
  source: WebhookSource,
  spent: DaySpend,
): WebhookSourceView {
  const tenant = source.tenant;
  const workflow = typeof source.workflow === 'string' ? source.workflow : 'from the payload';
  const caps = { maxUnitsPerRun: source.maxUnitsPerRun, maxUnitsPerDay: source.maxUnitsPerDay };
  const figures = capFigures(caps, spent);
  const cap = caps.maxUnitsPerDay;
  if (cap === undefined || spent.units < cap)
    return { name, origin, tenant, workflow, state: 'open', caps: figures };
  const frees = dayCapFreesAt(spent, cap);
  const resumesAt = frees === undefined ? undefined : new Date(frees).toISOString();
  return {
    name,
    origin,
    tenant,
    workflow,
    state: 'capped',
    reason: `day cost cap reached: its ${spent.jobs} job(s) of the last 24 hours were billed ${spent.units} units, maxUnitsPerDay is ${cap}; deliveries are answered 429 cost-cap (with Retry-After) and recorded, and start no job. It takes deliveries again by itself${resumesAt ? ` at ${resumesAt}` : ''} once the 24 hours' spend is below the cap, or at once when maxUnitsPerDay of webhooks.${name} is raised in opflow.config.json`,
    resumesAt,
    caps: figures,
  };
}

/** The variables of local signing secrets; the aws prefix variable is a setting, not a secret. */
const secretVariable = /^OPFLOW_WEBHOOK_SECRET_(.+)$/;

/**
 * The sources of the local signing secrets set in `env` (OPFLOW_WEBHOOK_SECRET_<SOURCE>, an empty
 * value is unset), by the name their deliveries are recorded under: lower case, `_` for `-` (a
 * request to `/webhooks/my-hook` or `/webhooks/my_hook` is source `my_hook`). Sorted.
 */
export function localSecretSources(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.keys(env)
    .flatMap((variable) => {
      const suffix = secretVariable.exec(variable)?.[1];
      if (suffix === undefined || variable === 'OPFLOW_WEBHOOK_SECRET_PREFIX' || !env[variable]?.trim())
        return [];
      const name = suffix.toLowerCase();
      return webhookSourcePattern.test(name) ? [name] : [];
    })
    .sort();
}

/** A source's settings when the file has none for it. */
const unmappedSource = () => webhookSourceSchema.parse({});

/**
 * The sources of `webhooks`, and those known only by their secret, sorted by name; with `tenant` (a
 * caller bound to a tenant) only the sources whose jobs are that tenant's (a source's `tenant`
 * setting, default `default`). With `deliveries`, each with its last delivery. The secret-only
 * sources are `secretSources` (without a source of the file sharing its secret: locally `-` and `_`
 * read the same) when given, else those with a delivery recorded that the file does not declare.
 */
export async function webhookSourceViews(
  deps: Pick<JobDeps, 'store' | 'clock'>,
  webhooks: Readonly<Record<string, WebhookSource>>,
  options: {
    tenant?: string | undefined;
    deliveries?: WebhookDeliveryLog | undefined;
    secretSources?: readonly string[] | undefined;
  } = {},
): Promise<WebhookSourceView[]> {
  const local = (name: string) => name.replace(/-/g, '_');
  const declared = new Set(Object.keys(webhooks).map(local));
  const secretOnly = options.secretSources?.filter((name) => !declared.has(local(name)));
  const last = options.deliveries
    ? await lastDeliveries(
        options.deliveries,
        options.tenant,
        secretOnly && [...Object.keys(webhooks), ...secretOnly],
      )
    : undefined;
  const settings = new Map<string, { origin: WebhookSourceView['origin']; source: WebhookSource }>();
  const unmapped = unmappedSource();
  for (const name of secretOnly ?? [...(last?.keys() ?? [])].filter((name) => !Object.hasOwn(webhooks, name)))
    settings.set(name, { origin: 'secret', source: unmapped });
  for (const [name, source] of Object.entries(webhooks)) settings.set(name, { origin: 'config', source });
  const names = [...settings.keys()]
    .filter((name) => options.tenant === undefined || settings.get(name)!.source.tenant === options.tenant)
    .sort();
  const now = deps.clock.now();
  const tenantOf = (name: string) => settings.get(name)!.source.tenant;
  const tenants = [...new Set(names.map(tenantOf))];
  const spends = await Promise.all(
    tenants.map((tenant) =>
      spendBySource(
        deps,
        tenant,
        names.filter((name) => tenantOf(name) === tenant),
        now,
      ),
    ),
  );
  const spendOf = (name: string) =>
    spends[tenants.indexOf(tenantOf(name))]!.get(name) ?? { units: 0, jobs: 0, billed: [] };
  return names.map((name) => {
    const { origin, source } = settings.get(name)!;
    const view = viewOf(name, origin, source, spendOf(name));
    const delivery = last?.get(name);
    return delivery ? { ...view, lastDelivery: delivery } : view;
  });
}
