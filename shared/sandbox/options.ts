/**
 * The sandbox's options: their types, their defaults, and a zod schema that refuses unknown or
 * malformed options up front with a message naming the field.
 */
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { formatIssues } from '../errors/zod-issues';
import { findOperation } from '../openplatform/catalogue';
import {
  DEFAULT_LINK_TTL_MS,
  DEFAULT_STREAM_CHUNK_DELAY_MS,
  SANDBOX_API_KEY,
  type TaskDuration,
} from './constants';
import { type FaultRule, faultRuleSchema } from './fault-rules';
import { taskDurationSchema } from './task-times';

export interface SandboxKey {
  key: string;
  /** Catalogue groups (OpenAPI tags) the key may call; every group when omitted. */
  groups?: string[];
  /** Calls per second (by `limiter`, sandbox clock); unlimited when omitted. */
  qps?: number;
  /**
   * How `qps` is counted: `sliding-window` (default: at most `qps` calls in any second),
   * `token-bucket` (`burst` tokens, refilled at `qps` a second: bursts after a pause) or
   * `fixed-window` (at most `qps` calls per second of the clock, counted from each whole second).
   */
  limiter?: 'sliding-window' | 'token-bucket' | 'fixed-window';
  /** `token-bucket`: the most calls at once after a pause (default: `qps`, at least 1). */
  burst?: number;
  /** Total calls the key may make; unlimited when omitted. Past it: 67200001. */
  quota?: number;
  /** How a call over `qps` is answered: HTTP 200 with 67200002 (`envelope`, the default) or HTTP 429. */
  qpsExceededAs?: 'envelope' | 'http-429';
}

export interface SandboxOptions {
  /**
   * TCP port; 0 picks a free one. When omitted: a free one, or with `stateFile` the port the file's
   * sandbox listened on when that is free (so links it handed out keep working).
   */
  port?: number;
  /** Interface to listen on; 127.0.0.1 by default. */
  host?: string;
  /** Accepted keys; by default only `SANDBOX_API_KEY`, with every group and no limits. */
  keys?: SandboxKey[];
  /** The clock (milliseconds) that task progress, QPS windows, the ledger and link expiry follow; `Date.now` by default. */
  now?: () => number;
  /** Duration of the work each operation starts, by operationId or short name (`ai35-7`); see shared/sandbox/README.md for defaults. */
  taskDurations?: Record<string, TaskDuration>;
  /** Duration of work not listed in `taskDurations`; when given it also replaces the built-in per-operation defaults. */
  defaultTaskDuration?: TaskDuration;
  /** How long a download link stays valid, by the clock; 3 hours by default. */
  linkTtlMs?: number;
  /**
   * Seed of every generator (ids, content, durations, fault draws); 1 by default. Without it, ids
   * (and the durations drawn from them) also differ per sandbox, so a restarted sandbox never hands
   * out an id an earlier one did (a job resumed with an old task id gets 404, not another's task).
   */
  seed?: number;
  /** Wall-clock pause between stream frames; 20 ms by default (use 0 in tests). */
  streamChunkDelayMs?: number;
  /** Fault rules in force from the start; none by default. */
  faults?: FaultRule[];
  /** Receives one line per call (never a key); silent by default. */
  logger?: (line: string) => void;
  /**
   * A file to keep the sandbox's tasks, links, id generator and quota counts in, so a sandbox
   * started again on it continues the work callers hold ids for (see README, "State file"). Written
   * atomically after every request that changes something, before the answer; when omitted (the
   * default) everything lives in memory only.
   */
  stateFile?: string;
  /**
   * Drift seed: when given, counts, references and answers move between runs of the same request,
   * seeded, so the same seed and run number answer the same (see README, "Drift"). Off by default.
   */
  drift?: number;
  /**
   * Keep each operation call's request body (as parsed) in its ledger entry (`body`), so a test can
   * tell which job made a call. Off by default: the ledger keeps only the body's hash.
   */
  ledgerBodies?: boolean;
}

const fn = <T>(what: string) => z.custom<T>((value) => typeof value === 'function', `must be ${what}`);

/** How a key's `qps` is counted (`SandboxKey.limiter`). */
export const sandboxLimiters = ['sliding-window', 'token-bucket', 'fixed-window'] as const;

const keySchema = z
  .strictObject({
    key: z.string().min(1),
    groups: z.array(z.string().min(1)).optional(),
    qps: z.number().positive().optional(),
    limiter: z.enum(sandboxLimiters).optional(),
    burst: z.number().min(1).optional(),
    quota: z.number().int().nonnegative().optional(),
    qpsExceededAs: z.enum(['envelope', 'http-429']).optional(),
  })
  .refine((key) => key.burst === undefined || key.limiter === 'token-bucket', {
    path: ['burst'],
    message: "applies only to limiter 'token-bucket'",
  });

const optionsSchema = z.strictObject({
  port: z.number().int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
  keys: z.array(keySchema).min(1).optional(),
  now: fn<() => number>('a function returning milliseconds').optional(),
  taskDurations: z
    .record(
      z
        .string()
        .refine(
          (id) => findOperation(id) !== undefined,
          'unknown operation (use an operationId or a short name)',
        ),
      taskDurationSchema,
    )
    .optional(),
  defaultTaskDuration: taskDurationSchema.optional(),
  linkTtlMs: z.number().positive().optional(),
  seed: z.number().int().optional(),
  streamChunkDelayMs: z.number().nonnegative().optional(),
  faults: z.array(faultRuleSchema).optional(),
  logger: fn<(line: string) => void>('a function taking a line').optional(),
  stateFile: z.string().min(1).optional(),
  drift: z.number().int().optional(),
  ledgerBodies: z.boolean().optional(),
});

export interface ResolvedOptions {
  port: number;
  /** No port was given: with a state file, listen on its sandbox's port again when free. */
  portOmitted: boolean;
  host: string;
  keys: SandboxKey[];
  now: () => number;
  /** By operationId. */
  taskDurations: Record<string, TaskDuration>;
  defaultTaskDuration?: TaskDuration;
  linkTtlMs: number;
  seed: number;
  /** Mixed into the id generator: empty when `seed` was given, random per sandbox otherwise. */
  idSalt: string;
  streamChunkDelayMs: number;
  faults: FaultRule[];
  logger?: (line: string) => void;
  stateFile?: string;
  drift?: number;
  ledgerBodies: boolean;
}

/** Validate the options and fill in the defaults. Throws a message naming every bad field. */
export function resolveOptions(options: SandboxOptions = {}): ResolvedOptions {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success)
    throw new Error(`invalid sandbox options: ${formatIssues(parsed.error, { root: 'options' })}`);
  const value = parsed.data;
  const taskDurations: Record<string, TaskDuration> = {};
  for (const [id, duration] of Object.entries(value.taskDurations ?? {})) {
    taskDurations[findOperation(id)?.operationId ?? id] = duration;
  }
  return {
    port: value.port ?? 0,
    portOmitted: value.port === undefined,
    host: value.host ?? '127.0.0.1',
    keys: value.keys ?? [{ key: SANDBOX_API_KEY }],
    now: value.now ?? Date.now,
    taskDurations,
    ...(value.defaultTaskDuration ? { defaultTaskDuration: value.defaultTaskDuration } : {}),
    linkTtlMs: value.linkTtlMs ?? DEFAULT_LINK_TTL_MS,
    seed: value.seed ?? 1,
    idSalt: value.seed === undefined ? randomBytes(8).toString('hex') : '',
    streamChunkDelayMs: value.streamChunkDelayMs ?? DEFAULT_STREAM_CHUNK_DELAY_MS,
    faults: value.faults ?? [],
    ...(value.logger ? { logger: value.logger } : {}),
    ...(value.stateFile ? { stateFile: value.stateFile } : {}),
    ...(value.drift === undefined ? {} : { drift: value.drift }),
    ledgerBodies: value.ledgerBodies ?? false,
  };
}
