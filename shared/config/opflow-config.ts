/**
 * The opflow config file (`opflow.config.json`; another with `--config <file>` or OPFLOW_CONFIG):
 * webhook sources and their payload mappings, and schedules. Validated with zod when a command
 * starts; every problem names the file and the field (`opflow.config.json: schedules[1].cron: ...`),
 * or the line of a JSON syntax error.
 *
 * A mapping template is any JSON value; an object `{"$from": "/json/pointer"}` (optionally with
 * `"default"`) in it is replaced by the value at that JSON pointer (RFC 6901) of the webhook's payload.
 */
import { resolve } from 'node:path';
import { Cron } from 'croner';
import * as z from 'zod';
import { type CallbackUrlPolicy, CallbackUrlRefused, checkCallbackUrl } from '../callbacks/ssrf-guard';
import { jobPrioritySchema, selectionPolicySchema } from '../engine/job-record';
import { errorMessage } from '../errors/error-message';
import { uniqueNames } from '../errors/unique-names';
import { issueMessages } from '../errors/zod-issues';
import { FileRefused, readRegularFile } from '../files/bounded-read';
import { didYouMean } from '../openplatform/closest-name';
import { reviewersConfigSchema } from '../reviewers/review-config';
import { defaultDisclosureFormConfig, disclosureFormConfigSchema } from './disclosure-form-config';

export const defaultConfigFile = 'opflow.config.json';

/** The local variable of a webhook source's signing secret: upper case, `_` for `-`. */
export function webhookSecretVariable(source: string): string {
  return `OPFLOW_WEBHOOK_SECRET_${source.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}
export const configFileVariable = 'OPFLOW_CONFIG';

/** A problem with the config file, naming the file and the field. */
export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
}

/*
 * Every schema of the configuration is `z.lazy`, built on its first parse, not when this module
 * loads: the api and schedules Lambda functions import it for their routes and events, and most of
 * their cold starts parse no configuration (docs/concepts/lambda-bundles.md).
 */
const pointerSchema = z.lazy(() =>
  z.string().regex(/^(\/([^~/]|~[01])*)*$/, 'must be a JSON pointer such as /issue/title (RFC 6901)'),
);

/** `{"$from": "/a/b", "default"?: ...}`: a value taken from the payload. */
export const fromSchema = z.lazy(() =>
  z.strictObject({ $from: pointerSchema, default: z.unknown().optional() }),
);

const durationPattern = /^(\d+)(ms|s|m|h|d)$/;
export function parseDuration(text: string): number {
  const match = durationPattern.exec(text.trim());
  if (!match) throw new Error(`not a duration: ${text}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
    match[2] as 'ms' | 's' | 'm' | 'h' | 'd'
  ];
  return Number(match[1]) * unit;
}
/** The largest jitter of any schedule. */
const maxJitterMs = 86_400_000;

/** `90000` → `90s`, `3600000` → `1h`: the largest unit that divides it. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}
const durationSchema = z.lazy(() =>
  z.string().regex(durationPattern, 'must be a duration such as 30s, 15m, 2h or 1d'),
);

const nameSchema = z.lazy(() =>
  z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9_-]{0,63}$/,
      'must be 1-64 lower-case letters, digits, "-" or "_", starting with a letter or digit',
    ),
);

const tenantSchema = z.lazy(() =>
  z
    .string()
    .min(1)
    .max(64)
    .regex(/^[\w.-]+$/, 'letters, digits, dot, dash and underscore only'),
);

/** A cap on billed units: a positive whole number. */
const unitsCapSchema = z.lazy(() =>
  z.number().int('must be a whole number of billed units').positive('must be more than 0'),
);

export const webhookSourceSchema = z.lazy(() =>
  z
    .strictObject({
      /** The tenant whose jobs this source creates. Default: `default`. */
      tenant: tenantSchema.default('default'),
      /** The workflow, or where it is in the payload. Without it, the body is a job request. */
      workflow: z.union([z.string().min(1), fromSchema]).optional(),
      /** The job's input: a template over the payload. */
      input: z.unknown().optional(),
      selection: z.union([selectionPolicySchema, fromSchema]).optional(),
      callbackUrl: z.union([z.string(), fromSchema]).optional(),
      label: z.union([z.string().max(200), fromSchema]).optional(),
      /**
       * The priority of the source's jobs against the key's other work: `high`, `normal` or `low`
       * (docs/concepts/admission.md). Set here only: a sender cannot raise it. Default: normal.
       */
      priority: z.lazy(() => jobPrioritySchema).optional(),
      /** Largest body accepted (bytes). Default: 256 KiB. */
      maxBodyBytes: z
        .number()
        .int()
        .min(1)
        .max(10 * 1024 * 1024)
        .default(256 * 1024),
      /** How far a webhook-timestamp may be from now, either way: 1s to 1d. Default: 5m. */
      tolerance: durationSchema
        .refine((text) => {
          const ms = durationPattern.test(text) ? parseDuration(text) : 1000;
          return ms >= 1000 && ms <= 86_400_000;
        }, 'must be from 1s to 1d')
        .default('5m'),
      /**
       * Billed units the source's jobs may spend in any 24 hours; past it, new deliveries are refused
       * (429 `cost-cap`, the figures in the message) until the day's spend falls below. Each job may
       * spend what is left of it (one in progress stops before its next step). Default: no cap.
       */
      maxUnitsPerDay: unitsCapSchema.optional(),
      /**
       * Billed units each of the source's jobs may spend: a job that reaches it stops before its next
       * step (FAILED, kind `cost-cap`; `opflow retry --max-units` goes on). Default: no cap.
       */
      maxUnitsPerRun: unitsCapSchema.optional(),
    })
    .superRefine((source, ctx) => checkTemplate(source.input, ['input'], ctx)),
);

/** Every `$from` object inside a template must be a valid `{"$from": pointer, "default"?}`. */
function checkTemplate(template: unknown, path: (string | number)[], ctx: z.RefinementCtx): void {
  if (Array.isArray(template)) {
    for (const [index, item] of template.entries()) checkTemplate(item, [...path, index], ctx);
    return;
  }
  if (template === null || typeof template !== 'object') return;
  if ('$from' in template) {
    const parsed = fromSchema.safeParse(template);
    for (const issue of parsed.error?.issues ?? []) {
      ctx.addIssue({
        code: 'custom',
        path: [...path, ...issue.path.map((part) => part as string | number)],
        message: issue.message,
      });
    }
    return;
  }
  for (const [key, value] of Object.entries(template)) checkTemplate(value, [...path, key], ctx);
}
export type WebhookSource = z.infer<typeof webhookSourceSchema>;

export const overlapPolicies = ['skip', 'buffer-one', 'allow-all'] as const;

export const scheduleSchema = z.lazy(() =>
  z
    .strictObject({
      name: nameSchema,
      /** A cron expression (5 or 6 fields, croner syntax). */
      cron: z.string().min(1),
      /** An IANA time zone, e.g. Europe/Berlin. Default: UTC. */
      timezone: z.string().min(1).default('UTC'),
      workflow: z.string().min(1),
      input: z.unknown(),
      tenant: tenantSchema.default('default'),
      selection: selectionPolicySchema.default({ mode: 'auto' }),
      callbackUrl: z.string().optional(),
      /** The priority of its jobs against the key's other work: `high`, `normal` or `low`. Default: normal. */
      priority: z.lazy(() => jobPrioritySchema).optional(),
      /** When a slot comes while the previous slot's job is still running: skip it (default), keep one waiting, or run all. */
      overlap: z.enum(overlapPolicies).default('skip'),
      /** How far back missed slots are run after downtime. Default: one slot (the latest missed one). */
      catchUp: z.union([z.literal('one'), z.literal('none'), durationSchema]).default('one'),
      /** A random delay up to this much after each slot, to spread load. Default: none. */
      jitter: durationSchema.optional(),
      /** Paused schedules do not fire (trigger and backfill still work); say why. */
      paused: z.strictObject({ reason: z.string().min(1).max(500) }).optional(),
      /**
       * Billed units its jobs may spend in any 24 hours; reaching it pauses the schedule (with the
       * figures as the reason) until it is resumed. Each job may spend what is left of it (a run in
       * progress stops before its next step). Default: no cap.
       */
      maxUnitsPerDay: unitsCapSchema.optional(),
      /**
       * Billed units each run (each job of a slot) may spend: a run that reaches it stops before its
       * next step (FAILED, kind `cost-cap`) and pauses the schedule with the figures as the reason,
       * until it is resumed. Default: no cap.
       */
      maxUnitsPerRun: unitsCapSchema.optional(),
    })
    .superRefine((schedule, ctx) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: schedule.timezone });
      } catch {
        ctx.addIssue({
          code: 'custom',
          path: ['timezone'],
          message: `"${schedule.timezone}" is not an IANA time zone`,
        });
        return;
      }
      const fields = schedule.cron.trim().split(/\s+/);
      if (!schedule.cron.trim().startsWith('@') && fields.length !== 5 && fields.length !== 6) {
        ctx.addIssue({
          code: 'custom',
          path: ['cron'],
          message: `is not a cron expression: it has ${fields.length} fields, and one has 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)`,
        });
        return;
      }
      let slots: Date[];
      try {
        slots = new Cron(schedule.cron, { timezone: schedule.timezone, paused: true }).nextRuns(25);
      } catch (error) {
        ctx.addIssue({
          code: 'custom',
          path: ['cron'],
          message: `is not a cron expression: ${errorMessage(error)}`,
        });
        return;
      }
      if (slots.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['cron'],
          message: 'names no time from now on: it would never fire',
        });
        return;
      }
      if (schedule.jitter !== undefined && durationPattern.test(schedule.jitter)) {
        // A slot's random delay stays below the next slot, and within a day.
        let bound = maxJitterMs;
        for (let i = 1; i < slots.length; i++)
          bound = Math.min(bound, slots[i]!.getTime() - slots[i - 1]!.getTime());
        if (parseDuration(schedule.jitter) > bound) {
          ctx.addIssue({
            code: 'custom',
            path: ['jitter'],
            message: `must be at most ${formatDuration(bound)} (the shortest time between two of this schedule's slots, and never over 1d)`,
          });
        }
      }
    }),
);
export type Schedule = z.infer<typeof scheduleSchema>;

export const opflowConfigSchema = z.lazy(() =>
  z
    .strictObject({
      $schema: z.string().optional(),
      webhooks: z.record(nameSchema, webhookSourceSchema).default({}),
      schedules: z.array(scheduleSchema).default([]),
      disclosureForm: disclosureFormConfigSchema.default(defaultDisclosureFormConfig),
      /** Who is notified when a job waits for a selection (docs/guides/reviewers.md). */
      reviewers: reviewersConfigSchema.optional(),
    })
    .superRefine((config, ctx) => {
      // Locally a source's secret is OPFLOW_WEBHOOK_SECRET_<SOURCE>, where "-" and "_" read the same.
      const bySecret = new Map<string, string>();
      for (const source of Object.keys(config.webhooks)) {
        const variable = webhookSecretVariable(source);
        const other = bySecret.get(variable);
        if (other !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['webhooks', source],
            message: `shares its secret ${variable} with webhooks.${other} ("-" and "_" read the same there): rename one`,
          });
        bySecret.set(variable, source);
      }
      uniqueNames(config.schedules, ['schedules'], ctx);
    }),
);
export type OpflowConfig = z.infer<typeof opflowConfigSchema>;

/** The workflows a config may name: their names, or (to check schedules' inputs too) the workflows. */
export type ConfigWorkflows = ReadonlySet<string> | ReadonlyMap<string, { input: z.ZodType }>;

/**
 * Validates a parsed config; `file` is named in errors. With `workflows`, every workflow a schedule
 * or a mapping names must exist, and (given the workflows themselves) a schedule's input must be
 * valid for its workflow. Every fixed `callbackUrl` must pass the callback URL rules (`callbackPolicy`:
 * the hosts allowed beyond them). So a schedule that could never create its job stops the command
 * that loads it, instead of failing at every slot.
 */
export function parseOpflowConfig(
  value: unknown,
  file: string,
  workflows?: ConfigWorkflows,
  callbackPolicy: CallbackUrlPolicy = {},
): OpflowConfig {
  const parsed = opflowConfigSchema.safeParse(value);
  if (!parsed.success) {
    throw new ConfigFileError(issueMessages(parsed.error, { file }).join('\n'));
  }
  const problems: string[] = [];
  const callbackProblem = (where: string, url: string) => {
    try {
      checkCallbackUrl(url, callbackPolicy);
    } catch (error) {
      if (!(error instanceof CallbackUrlRefused)) throw error;
      problems.push(`${file}: ${where}: ${error.message.replace(/^callbackUrl: /, '')}`);
    }
  };
  parsed.data.schedules.forEach((schedule, index) => {
    const where = `schedules[${index}]`;
    if (workflows && !workflows.has(schedule.workflow)) {
      problems.push(
        `${file}: ${where}.workflow: unknown workflow "${schedule.workflow}"${didYouMean(schedule.workflow, [...workflows.keys()])}`,
      );
    } else if (workflows instanceof Map) {
      const input = workflows.get(schedule.workflow)!.input.safeParse(schedule.input);
      if (!input.success) problems.push(...issueMessages(input.error, { file, root: `${where}.input` }));
    }
    if (schedule.callbackUrl !== undefined) callbackProblem(`${where}.callbackUrl`, schedule.callbackUrl);
  });
  for (const [source, mapping] of Object.entries(parsed.data.webhooks)) {
    if (workflows && typeof mapping.workflow === 'string' && !workflows.has(mapping.workflow))
      problems.push(
        `${file}: webhooks.${source}.workflow: unknown workflow "${mapping.workflow}"${didYouMean(mapping.workflow, [...workflows.keys()])}`,
      );
    if (typeof mapping.callbackUrl === 'string')
      callbackProblem(`webhooks.${source}.callbackUrl`, mapping.callbackUrl);
  }
  if (problems.length > 0) throw new ConfigFileError(problems.join('\n'));
  return parsed.data;
}

/** The line and column of a character offset, for JSON syntax errors. */
function lineOf(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

/** The largest config file read (1 MiB): webhook mappings and schedules are far smaller. */
export const maxConfigBytes = 1024 * 1024;

/**
 * Reads the config: `explicit` (the `--config` flag), else OPFLOW_CONFIG, else `opflow.config.json`
 * in `cwd` when it exists; an empty config when there is none. A named file that is missing is an
 * error. The file must be a regular file of at most 1 MiB of UTF-8 (a byte-order mark is skipped),
 * read by the bounded-read rule (no FIFO, device or folder); an error names the flag or variable that
 * named it, and the path.
 */
export async function loadOpflowConfig(options: {
  explicit?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  workflows?: ConfigWorkflows | undefined;
  callbackPolicy?: CallbackUrlPolicy | undefined;
}): Promise<{ config: OpflowConfig; file: string | undefined }> {
  const fromEnv = options.env[configFileVariable]?.trim() || undefined;
  const named = options.explicit ?? fromEnv;
  const file = resolve(options.cwd, named ?? defaultConfigFile);
  const shown = named ?? defaultConfigFile;
  const prefix = options.explicit !== undefined ? '--config: ' : named ? `${configFileVariable}: ` : '';
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(file, { maxBytes: maxConfigBytes, shownAs: shown });
  } catch (error) {
    if (!(error instanceof FileRefused)) throw error;
    if (error.code === 'ENOENT') {
      if (named) throw new ConfigFileError(`${prefix}${shown}: no such config file`);
      return { config: parseOpflowConfig({}, defaultConfigFile), file: undefined };
    }
    throw new ConfigFileError(`${prefix}${shown}: cannot be read as the config file: ${error.reason}`);
  }
  let text: string;
  try {
    // The decoder skips a leading byte-order mark (editors on Windows write one).
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ConfigFileError(`${prefix}${shown}: is not UTF-8 text (save it as UTF-8)`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = errorMessage(error);
    const position = /position (\d+)/.exec(message)?.[1];
    throw new ConfigFileError(
      `${prefix}${shown}: not valid JSON${position === undefined ? '' : ` at ${lineOf(text, Number(position))}`}: ${message}`,
    );
  }
  return {
    config: parseOpflowConfig(value, `${prefix}${shown}`, options.workflows, options.callbackPolicy),
    file,
  };
}
