/**
 * The one place the engine is wired from a backend's ports: both runtimes (./local/pipeline.ts,
 * ./aws/pipeline.ts) and the test harness (test/support/engines.ts) call `wireEngine`, so a port,
 * a setting read from the environment or a hook added to the engine is added once.
 */
import { callbackPolicyFromEnv } from '../callbacks/ssrf-guard';
import { fairSharesFromEnv } from '../engine/admission/fair-share';
import type { BatchStore } from '../engine/batch-store';
import type { CallbackOutbox } from '../engine/callback-ports';
import type { EngineDeps, EngineMetrics, StepDeps } from '../engine/deps';
import type { Job } from '../engine/job-record';
import { messageBudgetFromEnv } from '../engine/job-record';
import type { PartialAnswerOptions } from '../engine/partial-answer';
import type { PollStatsStore } from '../engine/poll-stats';
import type { Clock, JobStore, KeySource, RateLimiter, ReportStore, WorkQueue } from '../engine/ports';
import type { UpstreamIdentity } from '../engine/upstream-identity';
import type { WorkflowRegistry } from '../engine/workflow';
import type { Logger } from '../log/logger';
import type { OpenPlatformClient } from '../openplatform/types';
import { writeJobReport } from '../reports/write-job-report';

/** The ports a backend provides to the engine (shared/engine/ports.ts and the feature ports it calls). */
export interface EnginePorts {
  store: JobStore;
  queue: WorkQueue;
  reports: ReportStore;
  batches: BatchStore;
  keys: KeySource;
  rateLimiter: RateLimiter;
  /** Learned poll timing shared by every worker of the backend. */
  pollStats: PollStatsStore;
  callbackOutbox: CallbackOutbox;
}

export interface EngineWiring {
  ports: EnginePorts;
  client: OpenPlatformClient;
  workflows: WorkflowRegistry;
  clock: Clock;
  /** Default: `Math.random`. */
  random?: (() => number) | undefined;
  /** Where the message budget and the callback URL policy are read from. */
  env: Readonly<Record<string, string | undefined>>;
  /** The upstream's base URL polls learn their timing for, and which upstream each key reaches. */
  upstream: { scope: string; identify(apiKey: string): UpstreamIdentity };
  log?: Logger | undefined;
  metrics?: EngineMetrics | undefined;
  onJobChange: (job: Job) => void;
  /** Streamed answers as they arrive (the backend's partial-answer store and its pace); absent: none. */
  partialAnswers?: PartialAnswerOptions | undefined;
  /** What differs between backends: how admission books and parks, how calls in flight are guarded. */
  tuning?: Pick<StepDeps, 'admission' | 'reserveHorizonMs' | 'bookAheadMs' | 'inFlight'> | undefined;
}

/** The engine's dependencies over a backend's ports. */
export function wireEngine(wiring: EngineWiring): EngineDeps {
  const { ports, env } = wiring;
  return {
    store: ports.store,
    queue: ports.queue,
    reports: ports.reports,
    batches: ports.batches,
    keys: ports.keys,
    rateLimiter: ports.rateLimiter,
    messageBudget: messageBudgetFromEnv(env),
    // A limiter that keeps the key's shares in its bucket (aws) charges every token itself.
    fairShares: ports.rateLimiter.keepsShares ? undefined : fairSharesFromEnv(env),
    pollStats: ports.pollStats,
    pollStatsScope: wiring.upstream.scope,
    upstreamOf: (apiKey) => wiring.upstream.identify(apiKey),
    clock: wiring.clock,
    random: wiring.random ?? Math.random,
    client: wiring.client,
    workflows: wiring.workflows,
    writeReport: writeJobReport,
    log: wiring.log,
    metrics: wiring.metrics,
    callbacks: { outbox: ports.callbackOutbox, policy: callbackPolicyFromEnv(env) },
    onJobChange: wiring.onJobChange,
    partialAnswers: wiring.partialAnswers,
    ...wiring.tuning,
  };
}
