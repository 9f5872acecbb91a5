/**
 * The `reviewers` section of the opflow config file: the channels people are reached through
 * (a Slack or Teams incoming webhook, mail through SMTP, a signed generic webhook) and the rules
 * that say, per workflow, tenant, schedule or webhook source, who is notified when a job waits for
 * a selection, how often they are reminded, when a default answer is taken and whether two people
 * must confirm. The first rule that matches a job applies.
 *
 * The config holds no secret: a channel's URL (a Slack or Teams webhook URL is itself a secret),
 * a webhook's signing secret and the SMTP server's address with its password are read from the
 * environment locally (reviewer-secrets.ts) and from Secrets Manager on aws.
 */
import * as z from 'zod';
import { jobSources } from '../engine/job-record';
import { uniqueNames } from '../errors/unique-names';

const durationPattern = /^(\d+)(s|m|h|d)$/;
const durationUnits = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `30s`, `15m`, `4h`, `2d` in milliseconds. */
export function reviewDuration(text: string): number {
  const match = durationPattern.exec(text.trim());
  if (!match) throw new Error(`not a duration: ${text}`);
  return Number(match[1]) * durationUnits[match[2] as keyof typeof durationUnits];
}

const durationSchema = (least: string, leastMs: number) =>
  z
    .string()
    .regex(durationPattern, 'must be a duration such as 30s, 15m, 4h or 2d')
    .refine(
      (text) => !durationPattern.test(text) || reviewDuration(text) >= leastMs,
      `must be at least ${least}`,
    );

/*
 * Every schema is `z.lazy`, built on its first parse: the Lambda functions import the config's
 * schemas, and most of their cold starts parse no configuration (as in opflow-config.ts).
 */
const channelNameSchema = z.lazy(() =>
  z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be 1-64 lower-case letters, digits, "-" or "_"'),
);

export const channelKinds = ['slack', 'teams', 'email', 'webhook'] as const;
export type ChannelKind = (typeof channelKinds)[number];

export const reviewChannelSchema = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('slack') }),
    z.strictObject({ type: z.literal('teams') }),
    z.strictObject({ type: z.literal('webhook') }),
    z.strictObject({
      type: z.literal('email'),
      /** Each address gets its own message with its own links (so who confirmed is known). */
      to: z.array(z.email('must be a mail address')).min(1).max(50),
      /** The sender. Default: opflow@<the SMTP server's host>. */
      from: z.string().min(3).max(200).optional(),
    }),
  ]),
);
export type ReviewChannel = z.infer<typeof reviewChannelSchema>;

export const defaultAnswers = ['preselected', 'all'] as const;

export const reviewRuleSchema = z.lazy(() =>
  z.strictObject({
    name: channelNameSchema,
    /** Which jobs: every field given must match; none given matches every job. */
    match: z
      .strictObject({
        workflow: z.string().min(1).optional(),
        tenant: z.string().min(1).optional(),
        source: z.enum(jobSources).optional(),
        /** A schedule's name (its jobs). */
        schedule: z.string().min(1).optional(),
        /** A webhook source's name (its jobs). */
        webhook: z.string().min(1).optional(),
      })
      .default({}),
    /** The channels to notify, by name. */
    notify: z.array(channelNameSchema).min(1).max(20),
    /** Reminders while nobody has answered: every `every`, at most `times`. Default: none. */
    remind: z
      .strictObject({ every: durationSchema('1s', 1000), times: z.number().int().min(1).max(20) })
      .optional(),
    /**
     * After `after` without an answer, the default is taken: the upstream's suggested options
     * (`preselected`), all of them (`all`), or these option ids. Default: no timeout (the job's
     * deadline ends the wait).
     */
    timeout: z
      .strictObject({
        after: durationSchema('1s', 1000),
        answer: z.union([z.enum(defaultAnswers), z.array(z.string().min(1).max(100)).min(1)]),
      })
      .optional(),
    /** How many distinct people must confirm the same answer (2: a second approver). Default: 1. */
    approvers: z.union([z.literal(1), z.literal(2)]).default(1),
  }),
);
export type ReviewRule = z.infer<typeof reviewRuleSchema>;

export const reviewersConfigSchema = z.lazy(() =>
  z
    .strictObject({
      /** How long a link in a notice works (never past the timeout or the job's deadline). Default: 3d. */
      linkLifetime: durationSchema('1s', 1000).default('3d'),
      /** How often a process that sweeps looks for notices and timeouts due, in seconds. Default: 30. */
      checkEverySeconds: z.number().int().min(1).max(3600).default(30),
      channels: z.record(channelNameSchema, reviewChannelSchema).default({}),
      rules: z.array(reviewRuleSchema).default([]),
    })
    .superRefine((config, ctx) => {
      uniqueNames(config.rules, ['rules'], ctx);
      config.rules.forEach((rule, index) => {
        rule.notify.forEach((channel, at) => {
          if (!(channel in config.channels))
            ctx.addIssue({
              code: 'custom',
              path: ['rules', index, 'notify', at],
              message: `no channel "${channel}" in reviewers.channels`,
            });
        });
      });
    }),
);
export type ReviewersConfig = z.infer<typeof reviewersConfigSchema>;
