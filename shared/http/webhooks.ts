/**
 * `POST /webhooks/{source}`: a signed webhook starts a job. Framework-free like job-api.ts; the
 * local server (node-server.ts) and the Lambda api (runtime/lambda/api.ts) hand it the raw body bytes.
 *
 * 1. The source must have a signing secret (locally OPFLOW_WEBHOOK_SECRET_<SOURCE>, on aws the
 *    Secrets Manager secret `<prefix><source>`): else 404.
 * 2. The body may not exceed the source's limit: else 413.
 * 3. Standard Webhooks headers, a timestamp within the tolerance (default 5 minutes) and a `v1`
 *    signature of `id.timestamp.body` over the raw bytes (the standardwebhooks package; several
 *    signatures for rotation): else 401. A failed check re-reads the secret once (a rotated secret
 *    needs no restart or deploy).
 * 4. The payload goes through the source's mapping (opflow.config.json) or, without one, is a job
 *    request `{workflow, input, selection?, callbackUrl?}`: else 400 naming the field.
 * 5. The job is created with the idempotency key `webhook:<source>:<webhook-id>`: a repeated
 *    delivery answers 202 with the same job id and creates nothing.
 *
 * A source is its secret. Locally two spellings share one (`my-hook` and `my_hook` both read
 * OPFLOW_WEBHOOK_SECRET_MY_HOOK): a source of the config answers only to its own spelling (another
 * one is answered 404, as it would otherwise start jobs without the mapping and tenant), and a source
 * without a mapping is one source whatever the spelling (one replay key, one throttle, one name in
 * the deliveries), named by its secret.
 */
import { timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { ulid } from 'ulid';
import type * as z from 'zod';
import type { OpflowConfig, WebhookSource } from '../config/opflow-config';
import { parseDuration, webhookSecretVariable, webhookSourceSchema } from '../config/opflow-config';
import { parseSigningSecret, SigningSecretError, signingKey } from '../config/signing-secrets';
import type { JobDeps } from '../engine/deps';
import { JobRequestError, submitJob, submitJobRequestSchema } from '../engine/job-commands';
import type { CostCapOrigin } from '../engine/job-record';
import type { WebhookDeliveryLog } from '../engine/webhook-deliveries';
import { namedErrorMessage } from '../errors/error-message';
import { formatIssues } from '../errors/zod-issues';
import {
  costCapOrigin,
  type DaySpend,
  dayCapFreesAt,
  dayMs,
  runBudget,
  unitsSpentSince,
} from '../schedules/cost-cap';
import { json, refusal } from './api-error';
import { engineRefusals } from './engine-refusals';
import type { JobApiResponse } from './job-api';
import { webhookSourcePattern } from './request-schemas';

/** Signing secrets of incoming webhooks, by source. */
export interface WebhookSecrets {
  /** The source's secret, or undefined when the source has none (an unknown source). */
  get(source: string): Promise<string | undefined>;
  /** Read it again (after a failed check). */
  refresh(source: string): Promise<string | undefined>;
  /**
   * The name of the secret a source name reads: names with the same one share a secret, so they
   * are one source. Default: the name itself (on aws, the secret `<prefix><source>`). Locally the
   * variable cannot tell `my-hook` from `my_hook`: both are `my_hook`.
   */
  secretName?(source: string): string;
}

export interface WebhookRequest {
  source: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  body: Uint8Array;
}

export interface WebhookOptions {
  deps: JobDeps;
  config: OpflowConfig;
  secrets: WebhookSecrets;
  /** Requests per second per source, with a burst of twice that. Default: 20. */
  ratePerSecond?: number | undefined;
  /** Where each delivery to a known source is recorded (`GET /webhook-deliveries`). Default: nowhere. */
  deliveries?: WebhookDeliveryLog | undefined;
}

export { webhookSourcePattern };

/** A source's settings when its mapping gives none (built on first use, as the schema is). */
let defaultSourceSettings: WebhookSource | undefined;
const defaultSource = () => {
  defaultSourceSettings ??= webhookSourceSchema.parse({});
  return defaultSourceSettings;
};

/** The value at a JSON pointer, or undefined. */
export function atPointer(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  let current = value;
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(part)) return undefined;
      current = current[Number(part)];
    } else {
      if (!Object.hasOwn(current, part)) return undefined;
      current = (current as Record<string, unknown>)[part];
    }
  }
  return current;
}

class MappingError extends Error {}

/** Replaces every `{"$from": pointer}` of a template with the payload's value there. */
export function applyTemplate(template: unknown, payload: unknown, where: string): unknown {
  if (Array.isArray(template))
    return template.map((item, i) => applyTemplate(item, payload, `${where}[${i}]`));
  if (template !== null && typeof template === 'object') {
    const record = template as Record<string, unknown>;
    if (typeof record.$from === 'string') {
      const found = atPointer(payload, record.$from);
      if (found !== undefined) return found;
      if ('default' in record) return record.default;
      throw new MappingError(`${where}: the payload has nothing at ${record.$from || '(root)'}`);
    }
    return Object.fromEntries(
      Object.entries(record).map(([key, value]) => [key, applyTemplate(value, payload, `${where}.${key}`)]),
    );
  }
  return template;
}

const defaultBodySchema = submitJobRequestSchema
  .pick({ workflow: true, input: true, selection: true, callbackUrl: true, label: true })
  .strict();

/** Turns a payload into a job request, by the source's mapping or as a job request itself. */
export function mapPayload(
  payload: unknown,
  mapping: WebhookSource | undefined,
): { workflow: string; input: unknown; selection?: unknown; callbackUrl?: unknown; label?: unknown } {
  if (!mapping?.workflow) {
    const parsed = defaultBodySchema.safeParse(payload);
    if (!parsed.success) {
      throw new MappingError(formatIssues(parsed.error, { root: 'body' }));
    }
    return parsed.data;
  }
  const workflow = applyTemplate(mapping.workflow, payload, 'mapping.workflow');
  if (typeof workflow !== 'string')
    throw new MappingError('mapping.workflow: the payload value is not a string');
  return {
    workflow,
    input: applyTemplate(mapping.input ?? { $from: '' }, payload, 'mapping.input'),
    ...(mapping.selection === undefined
      ? {}
      : { selection: applyTemplate(mapping.selection, payload, 'mapping.selection') }),
    ...(mapping.callbackUrl === undefined
      ? {}
      : { callbackUrl: applyTemplate(mapping.callbackUrl, payload, 'mapping.callbackUrl') }),
    ...(mapping.label === undefined ? {} : { label: applyTemplate(mapping.label, payload, 'mapping.label') }),
  };
}

/** A token bucket per source. */
class SourceThrottle {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly rate: number) {}
  take(source: string, now: number): boolean {
    const bucket = this.buckets.get(source) ?? { tokens: this.rate * 2, at: now };
    bucket.tokens = Math.min(this.rate * 2, bucket.tokens + ((now - bucket.at) / 1000) * this.rate);
    bucket.at = now;
    this.buckets.set(source, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}

/**
 * Whether one of the `v1` signatures of the header is the source's signature of `id.timestamp.body`
 * (signed by the standardwebhooks package, compared in constant time). The timestamp window is
 * checked before, with the source's own tolerance: the package's `verify` has a fixed one.
 */
function signatureMatches(
  secret: string,
  body: Uint8Array,
  headers: { id: string; timestamp: string; signature: string },
): boolean {
  const expected = Buffer.from(
    new Webhook(secret).sign(headers.id, new Date(Number(headers.timestamp) * 1000), Buffer.from(body)),
  );
  return headers.signature.split(' ').some((given) => {
    const bytes = Buffer.from(given);
    return bytes.byteLength === expected.byteLength && timingSafeEqual(bytes, expected);
  });
}

/** Why a webhook-timestamp is refused, or undefined when it is within `toleranceMs` of `now`. */
function timestampProblem(timestamp: string, now: number, tolerance: string): string | undefined {
  if (!/^\d{1,12}$/.test(timestamp)) return 'webhook-timestamp must be whole seconds since 1970-01-01 UTC';
  const offsetMs = Number(timestamp) * 1000 - now;
  if (Math.abs(offsetMs) <= parseDuration(tolerance)) return undefined;
  const seconds = Math.round(Math.abs(offsetMs) / 1000);
  return `webhook-timestamp is ${seconds} s in the ${offsetMs < 0 ? 'past' : 'future'}, outside the window of ${tolerance} either side of now (is the sender's clock right?)`;
}

export function createWebhookHandler(options: WebhookOptions) {
  const answer = answerWebhook(options);
  const { deps, deliveries } = options;
  if (!deliveries) return async (request: WebhookRequest) => (await answer(request)).response;
  return async (request: WebhookRequest): Promise<JobApiResponse> => {
    const { response, tenant, source } = await answer(request);
    if (tenant === undefined) return response;
    // Recorded after the answer is decided: a failed write loses the entry, never the job.
    const at = deps.clock.now();
    const id = request.headers['webhook-id'];
    let body: { jobId?: string; created?: boolean; error?: { code: string; message: string } } = {};
    try {
      body = JSON.parse(response.body);
    } catch {
      // Not JSON: nothing more to note.
    }
    try {
      await deliveries.record({
        id: ulid(at),
        source: source ?? request.source,
        webhookId: id && id.length <= 200 && /^[\x21-\x7e]+$/.test(id) ? id : undefined,
        at,
        status: response.status,
        jobId: body.jobId,
        created: body.created,
        error: body.error && { code: body.error.code, message: body.error.message },
        tenant,
      });
    } catch (error) {
      deps.log?.warn('webhook delivery not recorded', {
        source: request.source,
        error: namedErrorMessage(error),
      });
    }
    return response;
  };
}

/**
 * The one name of the source a request names: the config's spelling of a mapped source, the
 * secret's name of an unmapped one; undefined for another spelling of a mapped source.
 */
export function sourceIdentity(
  options: Pick<WebhookOptions, 'config' | 'secrets'>,
  source: string,
): string | undefined {
  if (Object.hasOwn(options.config.webhooks, source)) return source;
  const secretName = (name: string) => options.secrets.secretName?.(name) ?? name;
  const shared = secretName(source);
  const mapped = Object.keys(options.config.webhooks).find((name) => secretName(name) === shared);
  return mapped === undefined ? shared : undefined;
}

/**
 * The source's `maxUnitsPerDay` against a delivery: why it is refused (its jobs of the last 24 hours
 * were billed that much; a repeated delivery of a job that exists is never refused), else the
 * `maxUnits` of its job: the run cap, lowered to what is left of the day cap, so a job in progress
 * stops at its next step once the day's spend reaches it.
 */
async function dayCapOf(
  deps: WebhookOptions['deps'],
  settings: { tenant: string; maxUnitsPerDay?: number | undefined; maxUnitsPerRun?: number | undefined },
  identity: string,
  key: string,
): Promise<
  | { refused: string; retryAfterSeconds?: number | undefined }
  | { maxUnits: number | undefined; costCap: CostCapOrigin | undefined }
> {
  const cap = settings.maxUnitsPerDay;
  const now = deps.clock.now();
  if (cap === undefined)
    return {
      maxUnits: settings.maxUnitsPerRun,
      costCap: costCapOrigin('webhook source', identity, settings, undefined, settings.maxUnitsPerRun, now),
    };
  const spent = await webhookSourceSpend(deps, settings.tenant, identity, now);
  if (spent.units < cap || (await deps.store.findByIdempotencyKey(settings.tenant, key))) {
    const maxUnits = runBudget(settings, spent.units);
    return { maxUnits, costCap: costCapOrigin('webhook source', identity, settings, spent, maxUnits, now) };
  }
  const frees = dayCapFreesAt(spent, cap);
  return {
    refused: `cost cap reached: the ${spent.jobs} job(s) of source ${identity} of the last 24 hours were billed ${spent.units} units, maxUnitsPerDay is ${cap}; deliveries start jobs again once the last 24 hours' spend is below it${frees === undefined ? '' : ` (at ${new Date(frees).toISOString()} if nothing more is billed)`}; this delivery is recorded but starts no job: send it again then, or raise maxUnitsPerDay of webhooks.${identity} in opflow.config.json`,
    retryAfterSeconds: frees === undefined ? undefined : Math.max(1, Math.ceil((frees - now) / 1000)),
  };
}

/** What the jobs of webhook source `identity` were billed in the 24 hours before `now`. */
export function webhookSourceSpend(
  deps: Pick<JobDeps, 'store'>,
  tenant: string,
  identity: string,
  now: number,
): Promise<DaySpend> {
  return unitsSpentSince(deps, { tenant, source: 'webhook', keyPrefix: `webhook:${identity}:` }, now - dayMs);
}

/** What a request names and proves, once known: the source's one name, its settings and tenant. */
interface KnownSender {
  identity?: string;
  tenant?: string;
}

/** A delivery whose signature matched: what starting its job needs. */
interface VerifiedDelivery {
  identity: string;
  settings: WebhookSource;
  mapping: WebhookSource | undefined;
  webhookId: string;
}

type Refusal = JobApiResponse;

/**
 * Steps 1 and 2: the source (it has a secret, it is the config's spelling), its throttle and body
 * limit. Fills `known` as it learns the source, so that a refusal is recorded against it.
 */
async function senderOf(
  options: WebhookOptions,
  throttle: SourceThrottle,
  request: WebhookRequest,
  known: KnownSender,
): Promise<Refusal | { secret: string; identity: string; settings: WebhookSource }> {
  const { source } = request;
  if (!webhookSourcePattern.test(source)) return refusal(404, 'not-found', 'no such webhook source');
  const secret = await options.secrets.get(source);
  if (secret === undefined) return refusal(404, 'not-found', `no webhook source ${source}`);
  const identity = sourceIdentity(options, source);
  if (identity === undefined) return refusal(404, 'not-found', `no webhook source ${source}`);
  const settings = options.config.webhooks[identity] ?? defaultSource();
  known.identity = identity;
  known.tenant = settings.tenant;
  if (!throttle.take(identity, options.deps.clock.now())) {
    return refusal(429, 'throttled', `too many webhooks from ${source}; try again shortly`, {
      'retry-after': '1',
    });
  }
  if (request.body.byteLength > settings.maxBodyBytes) {
    return refusal(413, 'body-too-large', `the body is over ${settings.maxBodyBytes} bytes`);
  }
  return { secret, identity, settings };
}

/** Step 3's headers: present, a usable webhook-id, a timestamp within the source's tolerance. */
function signatureHeaders(
  request: WebhookRequest,
  now: number,
  tolerance: string,
): Refusal | { id: string; timestamp: string; signature: string } {
  const id = request.headers['webhook-id'];
  const timestamp = request.headers['webhook-timestamp'];
  const signature = request.headers['webhook-signature'];
  if (!id || !timestamp || !signature) {
    return refusal(401, 'unauthorized', 'webhook-id, webhook-timestamp and webhook-signature are required');
  }
  if (id.length > 200 || !/^[\x21-\x7e]+$/.test(id)) {
    return refusal(401, 'unauthorized', 'webhook-id must be 1-200 visible ASCII characters');
  }
  const late = timestampProblem(timestamp, now, tolerance);
  return late ? refusal(401, 'unauthorized', late) : { id, timestamp, signature };
}

/**
 * Step 3's signature, with the secret as read and, when it does not match, as read again once (a
 * rotated secret needs no restart). A secret that is not a signing key is the operator's fault: 500.
 */
async function signatureRefusal(
  options: WebhookOptions,
  request: WebhookRequest,
  sender: { secret: string; identity: string },
  headers: { id: string; timestamp: string; signature: string },
): Promise<Refusal | undefined> {
  const usable = (value: string) => {
    try {
      signingKey(value, `the signing secret of source ${sender.identity}`);
      return true;
    } catch (error) {
      if (!(error instanceof SigningSecretError)) throw error;
      options.deps.log?.error('webhook secret not usable', { source: sender.identity, error: error.message });
      return false;
    }
  };
  if (!usable(sender.secret)) {
    return refusal(
      500,
      'misconfigured',
      `the signing secret of source ${request.source} is not usable; its operator must set a new one`,
    );
  }
  if (signatureMatches(sender.secret, request.body, headers)) return undefined;
  const fresh = await options.secrets.refresh(request.source);
  const verified =
    fresh !== undefined &&
    fresh !== sender.secret &&
    usable(fresh) &&
    signatureMatches(fresh, request.body, headers);
  return verified
    ? undefined
    : refusal(401, 'unauthorized', "no v1 signature in webhook-signature matches the source's secret");
}

/** Steps 1 to 3: the delivery comes from a known source and is signed by it, or the refusal. */
async function verifyDelivery(
  options: WebhookOptions,
  throttle: SourceThrottle,
  request: WebhookRequest,
  known: KnownSender,
): Promise<Refusal | VerifiedDelivery> {
  const sender = await senderOf(options, throttle, request, known);
  if ('status' in sender) return sender;
  const headers = signatureHeaders(request, options.deps.clock.now(), sender.settings.tolerance);
  if ('status' in headers) return headers;
  const refused = await signatureRefusal(options, request, sender, headers);
  if (refused) return refused;
  return {
    identity: sender.identity,
    settings: sender.settings,
    mapping: options.config.webhooks[sender.identity],
    webhookId: headers.id,
  };
}

/** Steps 4 and 5: the payload mapped to a job request, the source's day cap, the job (once per webhook-id). */
async function startWebhookJob(
  deps: JobDeps,
  body: Uint8Array,
  delivery: VerifiedDelivery,
): Promise<JobApiResponse> {
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    return refusal(400, 'invalid-json', 'the body is not JSON');
  }
  let mapped: ReturnType<typeof mapPayload>;
  try {
    mapped = mapPayload(payload, delivery.mapping);
  } catch (error) {
    if (error instanceof MappingError) return refusal(400, 'unmappable', error.message);
    throw error;
  }
  const { identity, settings, webhookId } = delivery;
  const idempotencyKey = `webhook:${identity}:${webhookId}`;
  const budget = await dayCapOf(deps, settings, identity, idempotencyKey);
  if ('refused' in budget)
    return refusal(
      429,
      'cost-cap',
      budget.refused,
      budget.retryAfterSeconds === undefined ? {} : { 'retry-after': String(budget.retryAfterSeconds) },
    );
  const { job, created } = await submitJob(deps, {
    ...(mapped as z.input<typeof defaultBodySchema>),
    tenant: settings.tenant,
    ...(settings.priority === undefined ? {} : { priority: settings.priority }),
    ...(budget.maxUnits === undefined ? {} : { maxUnits: budget.maxUnits }),
    ...(budget.costCap === undefined ? {} : { costCap: budget.costCap }),
    source: 'webhook',
    idempotencyKey,
    label: (mapped.label as string | undefined) ?? `webhook ${identity} ${webhookId}`.slice(0, 200),
  });
  return json(202, { jobId: job.id, created, status: job.status }, { location: `/jobs/${job.id}` });
}

/** The answer to one request, and the tenant of its source when the source is known (has a secret). */
function answerWebhook(options: WebhookOptions) {
  const throttle = new SourceThrottle(options.ratePerSecond ?? 20);
  const { deps } = options;
  return async (
    request: WebhookRequest,
  ): Promise<{ response: JobApiResponse; tenant?: string; source?: string }> => {
    const known: KnownSender = {};
    const respond = (response: JobApiResponse) => ({
      response,
      tenant: known.tenant,
      source: known.identity,
    });
    try {
      const delivery = await verifyDelivery(options, throttle, request, known);
      if ('status' in delivery) return respond(delivery);
      return respond(await startWebhookJob(deps, request.body, delivery));
    } catch (error) {
      if (error instanceof JobRequestError) {
        // A webhook names no job: whatever it names that is missing is its own mistake (400).
        const status = error.reason === 'not-found' ? 400 : engineRefusals[error.reason].status;
        return respond(refusal(status, 'invalid-request', error.message));
      }
      deps.log?.error('webhook failed', { source: request.source, error: namedErrorMessage(error) });
      return respond(refusal(500, 'internal', 'the webhook failed; try again later'));
    }
  };
}

/**
 * Local webhook secrets: OPFLOW_WEBHOOK_SECRET_<SOURCE> (upper case, `_` for `-`) in the `whsec_`
 * form, read each time; one that cannot be used throws a SigningSecretError naming the variable
 * (`opflow serve` checks them all before it starts: config/signing-secrets.ts).
 */
export function envWebhookSecrets(env: Readonly<Record<string, string | undefined>>): WebhookSecrets {
  const read = async (source: string) => {
    const variable = webhookSecretVariable(source);
    const value = env[variable]?.trim();
    return value ? parseSigningSecret(value, variable) : undefined;
  };
  return { get: read, refresh: read, secretName: localWebhookSecretName };
}

/** The source name a local secret variable stands for: `my-hook` and `my_hook` are both `my_hook`. */
export function localWebhookSecretName(source: string): string {
  return source.replace(/-/g, '_');
}

export { webhookSecretVariable };

export const webhookPathPattern = /^\/webhooks\/([^/]+)\/?$/;
