/**
 * What the HTTP routes answer: the JSON Schemas of their answers, by name. The route table
 * (routes.ts) names one per answer, `GET /openapi.json` describes them, and the tests hold every
 * route's real answers to them (test/integration/http/openapi.test.ts).
 */
import * as z from 'zod';
import { failureKinds, jobPriorities, jobSources, jobStatuses } from '../engine/job-record';
import { answerChannels } from '../engine/review-record';
import { upstreamIdentitySchema } from '../engine/upstream-identity';
import { bulkAnswerSchema, bulkChangedSchema } from './bulk-answer';

const isoTime = z.iso.datetime().describe('ISO 8601, UTC');

const jobErrorSchema = z.strictObject({
  step: z.string(),
  operationId: z.string().optional(),
  kind: z.enum(failureKinds),
  code: z.number().optional().describe("the platform's business error code"),
  message: z.string(),
  retryable: z.boolean(),
  httpStatus: z.number().optional(),
  correlationId: z.string().optional(),
  at: isoTime,
});

const usageSchema = z.strictObject({
  calls: z.number(),
  failedCalls: z.number(),
  throttledCalls: z.number(),
  billedUnits: z.number(),
  tokens: z.number(),
  callMs: z.number().describe('time spent in upstream calls, milliseconds'),
  duplicateCreates: z
    .number()
    .describe(
      'create calls sent again for one step: after a crash, or by a retry that creates its task again (each a paid repeat)',
    ),
  duplicateReads: z
    .number()
    .optional()
    .describe(
      'billed reads (a poll, a count) sent again because a process died between the read and its commit (each a paid repeat); absent when none',
    ),
  taskCost: z.number().optional().describe("the platform's own task_cost, summed, where it reports one"),
});

const pendingSchema = z.strictObject({
  step: z.string(),
  nextStep: z.string(),
  prompt: z.string(),
  options: z.array(
    z.strictObject({
      id: z.string().describe('what POST /jobs/{id}/selection names in `selected`'),
      label: z.string(),
      detail: z.string().optional(),
      preselected: z.boolean(),
    }),
  ),
  min: z.number(),
  max: z.number(),
  offeredAt: isoTime,
});

const runSchema = z.strictObject({
  status: z.enum(['FAILED', 'CANCELLED']),
  step: z.string(),
  error: jobErrorSchema.optional(),
  finishedAt: isoTime.optional(),
  usage: usageSchema,
  retriedAt: isoTime,
  retriedFrom: z.string(),
  fromStart: z.boolean(),
});

const answerSchema = z.strictObject({
  step: z.string().describe('the step whose options were answered'),
  options: z.array(z.string()).describe('the chosen option ids'),
  labels: z
    .array(z.string())
    .optional()
    .describe("the chosen options' labels as the person saw them, in the order of options"),
  via: z
    .enum(answerChannels)
    .describe(
      'how: a signed link, the CLI, the API, MCP, the dashboard, a bulk action, or the default at the timeout',
    ),
  by: z.string().optional().describe('who, when known (a name or mail address)'),
  at: isoTime,
  version: z.number().int().describe("the job's version that recorded it"),
  applied: z.boolean().optional().describe('false: a first approval, waiting for a second person'),
});

const reviewSchema = z.strictObject({
  rule: z.string().describe("the reviewers' rule of the config that applies"),
  approvals: z.number().int().describe('distinct people who must confirm'),
  rounds: z.array(
    z.strictObject({
      round: z.number().int().describe('1: the first notice; then one per reminder'),
      deliveries: z.array(
        z.strictObject({
          channel: z.string(),
          state: z.enum(['sent', 'failed']),
          attempts: z.number().int(),
          at: isoTime,
          error: z.string().optional(),
        }),
      ),
    }),
  ),
  nextNoticeAt: isoTime.optional(),
  timeoutAt: isoTime.optional().describe('when the default answer is applied if nobody answers'),
});

const deliverySchema = z.strictObject({
  channel: z.string(),
  state: z.enum(['sent', 'failed']),
  attempts: z.number().int(),
  at: isoTime,
  error: z.string().optional(),
});

const selectionRoundsSchema = z.strictObject({
  step: z.string().describe('the step whose options were asked for'),
  approvals: z
    .array(
      answerSchema.extend({
        round: z.number().int().describe('1: the first approver (or the one approver); 2: the second'),
        role: z
          .enum(['approver', 'first approver', 'second approver', 'default at timeout'])
          .describe('what the answer was in the rounds'),
      }),
    )
    .describe('who answered, when, how and what, round by round'),
  notices: z
    .array(
      z.strictObject({
        round: z.number().int(),
        label: z
          .enum(['notice', 'call for the second approval', 'reminder', 'notice of the default taken'])
          .describe(
            'the first notice, the call for a second approval once a first approver confirmed, a reminder, or the notice that the timeout took the default answer',
          ),
        deliveries: z.array(deliverySchema),
      }),
    )
    .optional()
    .describe('the notices of the review at this step (reviewers config)'),
  timeout: z
    .strictObject({
      at: isoTime.describe('when the default answer is taken if nobody answers'),
      answer: z.array(z.string()).optional().describe('the option ids the default answer takes'),
      labels: z
        .array(z.string())
        .optional()
        .describe("the default answer's option labels as the reviewers read them, in the order of answer"),
    })
    .optional(),
});

/** What the API shows of a job. */
export const jobViewSchema = z
  .strictObject({
    id: z.string(),
    workflow: z.string(),
    tenant: z.string(),
    status: z.enum(jobStatuses),
    step: z.string().describe('the step it is at (or stopped at)'),
    version: z.number().int(),
    label: z.string().optional(),
    title: z.string().optional().describe("the input's title or first line, else the label"),
    upstream: upstreamIdentitySchema
      .optional()
      .describe(
        'which upstream served the job: {kind: sandbox} (simulated data, not real publications) or {kind: platform, baseUrl, keyFingerprint}; absent before its first call',
      ),
    selection: z.strictObject({ mode: z.enum(['auto', 'manual']) }),
    pending: pendingSchema.optional().describe('the options offered, while AWAITING_INPUT'),
    selections: z.record(z.string(), z.array(z.string())),
    answers: z.array(answerSchema).optional().describe('who answered each selection point, when and how'),
    review: reviewSchema
      .optional()
      .describe('the people notified of the selection awaited (reviewers config)'),
    selectionRounds: z
      .array(selectionRoundsSchema)
      .optional()
      .describe(
        "each selection point's approval rounds, labelled: round 1 the first approver, round 2 the second, the notices and reminders, the timeout with its default answer",
      ),
    attempts: z.number().int(),
    polls: z.number().int(),
    recreatedTasks: z
      .number()
      .int()
      .optional()
      .describe(
        'upstream tasks this run created again because the platform no longer knew them ("task not found"): each a paid repeat, counted in usage.duplicateCreates',
      ),
    lastError: jobErrorSchema.optional(),
    usage: usageSchema,
    outputs: z.array(z.string()),
    runs: z.array(runSchema).optional().describe('earlier runs, when the job was retried'),
    batchId: z.string().optional(),
    priority: z
      .enum(jobPriorities)
      .describe("how soon its calls get the key's tokens against other work (docs/concepts/admission.md)"),
    maxUnits: z
      .number()
      .int()
      .optional()
      .describe('the most billed units the job may spend; reaching it stops the job (FAILED, kind cost-cap)'),
    source: z.enum(jobSources),
    idempotencyKey: z.string().optional(),
    callbackUrl: z.string().optional().describe('where the signed callback goes (its query elided)'),
    callback: z
      .strictObject({
        state: z.enum(['pending', 'delivered', 'gone', 'refused', 'exhausted']),
        round: z.number().int(),
        messageId: z.string(),
        attempts: z.array(
          z.strictObject({
            round: z.number().int(),
            at: isoTime,
            status: z.number().int().optional(),
            error: z.string().optional(),
            retryAfterMs: z.number().optional(),
            durationMs: z.number(),
          }),
        ),
        nextAttemptAt: isoTime.optional(),
        deliveredAt: isoTime.optional(),
      })
      .optional()
      .describe('the delivery of the callback'),
    nextRunAt: isoTime.optional().describe('when it is looked at next (absent once finished)'),
    callSince: isoTime
      .optional()
      .describe('when the paid call under way was sent (absent when none is out; not yet in usage.calls)'),
    deadlineAt: isoTime,
    createdAt: isoTime,
    updatedAt: isoTime,
    finishedAt: isoTime.optional(),
  })
  .meta({ id: 'Job' });
export type JobView = z.input<typeof jobViewSchema>;

export const errorAnswerSchema = z
  .strictObject({
    error: z.strictObject({
      status: z.number().int(),
      code: z.string().describe('not-found, invalid-request, conflict, forbidden, ...'),
      message: z.string().describe('what is wrong and where (body.field, query.field, path.id)'),
      issues: z
        .array(z.strictObject({ path: z.string(), message: z.string() }))
        .optional()
        .describe(
          'each field at fault (body.input.text) and what is wrong with it, when the request was held to a schema',
        ),
    }),
  })
  .meta({ id: 'Error' });

const reportFileSchema = z.strictObject({
  key: z.string(),
  name: z.string().describe('report.html, report.md, result.json, attachments/...'),
  url: z.string(),
  path: z.string().optional().describe('local backend: where the file is on disk'),
  href: z.string().optional(),
});

/** Caps and the last 24 hours' spend against them (a schedule's, a webhook source's). */
const capsSchema = z.strictObject({
  maxUnitsPerRun: z.number().int().optional(),
  maxUnitsPerDay: z.number().int().optional(),
  spentLast24h: z.number().describe('billed units of its jobs created in the last 24 hours'),
  jobsLast24h: z.number().int(),
  dayCapFreesAt: isoTime
    .optional()
    .describe('at or past maxUnitsPerDay: when the 24 hours’ spend falls below it if nothing more is billed'),
});

/** A schedule as GET /schedules and the schedule actions show it (shared/schedules/pause.ts). */
const scheduleViewSchema = z.strictObject({
  name: z.string(),
  cron: z.string(),
  timezone: z.string(),
  workflow: z.string(),
  tenant: z.string(),
  overlap: z.string().describe('skip, buffer-one or allow-all'),
  paused: z.string().optional().describe("the pause's reason (as pause.reason)"),
  pause: z
    .strictObject({
      reason: z.string(),
      by: z.enum(['config', 'runtime']).describe('config: lifted only by editing opflow.config.json'),
      at: isoTime.optional(),
    })
    .optional(),
  next: isoTime.optional().describe('the next slot; none while paused'),
  lastFired: isoTime.optional(),
  lastJob: z.strictObject({ id: z.string(), status: z.enum(jobStatuses) }).optional(),
  skipped: z.number().int().describe('slots skipped (overlap, pause)'),
  caps: capsSchema
    .optional()
    .describe('its cost caps and the last 24 hours’ spend against them; absent without caps'),
});

/** A webhook source as GET /webhook-sources shows it (shared/http/webhook-sources.ts): no secret, URL or input. */
const webhookSourceViewSchema = z.strictObject({
  name: z.string(),
  origin: z
    .enum(['config', 'secret'])
    .describe(
      'config: declared in opflow.config.json; secret: known only by its signing secret (no mapping: the payload is a job request; tenant default; no caps)',
    ),
  tenant: z.string().describe('the tenant of its jobs'),
  workflow: z.string().describe('the workflow it starts, or "from the payload"'),
  state: z.enum(['open', 'capped']).describe('capped: deliveries are answered 429 cost-cap until resumesAt'),
  reason: z.string().optional().describe('why it is capped: the figures, and how it reopens'),
  resumesAt: isoTime
    .optional()
    .describe('when a capped source takes deliveries again if nothing more is billed'),
  caps: capsSchema.describe('its cost caps (if any) and the last 24 hours’ spend'),
  lastDelivery: z
    .strictObject({
      at: isoTime,
      status: z.number().int().describe('the HTTP status it was answered'),
      webhookId: z.string().optional(),
      jobId: z.string().optional(),
      error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
    })
    .optional()
    .describe('its newest delivery among the newest 1,000 recorded (kept 30 days); absent if none'),
});

/** Every answer schema, by route: what the tests check real answers against. */
export const answerSchemas = {
  health: z.strictObject({ status: z.literal('ok'), time: isoTime }),
  job: z.strictObject({ job: jobViewSchema }),
  created: z.strictObject({ job: jobViewSchema, created: z.boolean() }),
  list: z.strictObject({
    jobs: z.array(jobViewSchema),
    cursor: z.string().optional().describe('pass as ?cursor= for the next page'),
  }),
  report: z.union([
    z.strictObject({
      jobId: z.string(),
      files: z.array(reportFileSchema),
    }),
    z.strictObject({
      jobId: z.string(),
      expiresInSeconds: z.number().int(),
      expiresAt: isoTime,
      files: z.array(reportFileSchema),
    }),
  ]),
  error: errorAnswerSchema,
  bulk: bulkAnswerSchema,
  bulkChanged: bulkChangedSchema,
  timeline: z.strictObject({
    jobId: z.string(),
    recorded: z
      .boolean()
      .describe('false when no history was kept for the job: its figures are unknown, not 0'),
    steps: z.array(
      z.strictObject({
        name: z.string(),
        title: z.string().optional(),
        operation: z.string().optional().describe('the operationId it calls, or download'),
        state: z.enum(['done', 'current', 'waiting', 'failed', 'cancelled', 'pending', 'skipped']),
        startedAt: isoTime.optional().describe('when the job first reached the step'),
        endedAt: isoTime.optional().describe('when the job last left it'),
        durationMs: z.number().optional().describe('time the job spent at the step, milliseconds'),
        calls: z.number().int(),
        callMs: z.number().describe('time spent in its upstream calls, milliseconds'),
        billedUnits: z.number(),
        throttled: z.number().int(),
        retries: z.number().int().describe('failed attempts at the step'),
        polls: z.number().int(),
        errors: z.array(jobErrorSchema),
        skipped: z
          .string()
          .optional()
          .describe('why the step was skipped: left out by the input (no call), or optional and failed'),
      }),
    ),
  }),
  deliveries: z.strictObject({
    deliveries: z.array(
      z.strictObject({
        id: z.string(),
        source: z.string(),
        webhookId: z.string().optional(),
        at: isoTime,
        status: z.number().int(),
        jobId: z.string().optional(),
        created: z.boolean().optional(),
        error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
        tenant: z.string(),
      }),
    ),
    cursor: z.string().optional(),
  }),
  schedules: z.strictObject({ schedules: z.array(scheduleViewSchema) }),
  webhookSources: z.strictObject({ sources: z.array(webhookSourceViewSchema) }),
  schedule: z.strictObject({ schedule: scheduleViewSchema }),
  triggered: z.strictObject({
    jobId: z.string(),
    created: z.boolean().describe('false: the job of this trigger existed already'),
    schedule: scheduleViewSchema,
  }),
  any: z.looseObject({}),
} as const;

/** The name of an answer schema, as the route table gives it. */
export type AnswerName = keyof typeof answerSchemas;
