/**
 * In-memory implementations of the engine's ports and a time-skipping driver, for engine unit
 * tests. The real backends (shared/backends/local, shared/backends/aws) are tested by the contract
 * suite; these exist so the engine's logic can be tested without any I/O.
 */
import {
  type EngineDeps,
  isTerminal,
  type Job,
  type JobPage,
  type JobStore,
  type ListJobsQuery,
  type RateLimiter,
  type ReportStore,
  runStep,
  type StoredObject,
  schedulableStatuses,
  type WorkMessage,
  type WorkQueue,
} from '../../shared/engine';

export class FakeClock {
  constructor(public current = Date.UTC(2026, 0, 5, 9, 0, 0)) {}
  now = () => this.current;
  advance(ms: number) {
    this.current += ms;
  }
}

const clone = <T>(value: T): T => structuredClone(value);

export class MemoryJobStore implements JobStore {
  readonly jobs = new Map<string, Job>();
  async create(job: Job) {
    if (job.idempotencyKey) {
      const existing = await this.findByIdempotencyKey(job.tenant, job.idempotencyKey);
      if (existing) return { job: existing, created: false };
    }
    if (this.jobs.has(job.id)) throw new Error(`job ${job.id} exists`);
    this.jobs.set(job.id, clone(job));
    return { job: clone(job), created: true };
  }
  async get(id: string) {
    const job = this.jobs.get(id);
    return job ? clone(job) : undefined;
  }
  async commit(job: Job, expectedVersion: number) {
    const stored = this.jobs.get(job.id);
    if (!stored || stored.version !== expectedVersion || job.version !== expectedVersion + 1) return false;
    this.jobs.set(job.id, clone(job));
    return true;
  }
  async listDue(now: number, limit: number) {
    return [...this.jobs.values()]
      .filter((job) => schedulableStatuses.has(job.status) && job.nextRunAt <= now)
      .sort((a, b) => a.nextRunAt - b.nextRunAt)
      .slice(0, limit)
      .map(clone);
  }
  async list(query: ListJobsQuery): Promise<JobPage> {
    const jobs = [...this.jobs.values()].filter(
      (job) =>
        (!query.status || job.status === query.status) && (!query.batchId || job.batchId === query.batchId),
    );
    return { jobs: jobs.map(clone) };
  }
  async findByIdempotencyKey(tenant: string, key: string) {
    const job = [...this.jobs.values()].find((j) => j.tenant === tenant && j.idempotencyKey === key);
    return job ? clone(job) : undefined;
  }
}

export class MemoryQueue implements WorkQueue {
  readonly maxDelayMs = 15 * 60_000;
  pending: { message: WorkMessage; visibleAt: number }[] = [];
  sent: { message: WorkMessage; delayMs: number }[] = [];
  constructor(private readonly clock: { now(): number }) {}
  async send(message: WorkMessage, delayMs: number) {
    this.sent.push({ message, delayMs });
    this.pending.push({ message: { ...message }, visibleAt: this.clock.now() + delayMs });
  }
  /** Remove and return the message that becomes visible first. */
  takeNext() {
    this.pending.sort((a, b) => a.visibleAt - b.visibleAt);
    return this.pending.shift();
  }
}

export class MemoryReportStore implements ReportStore {
  readonly objects = new Map<string, StoredObject>();
  async put(key: string, body: Uint8Array | string, contentType: string) {
    this.objects.set(key, {
      body: typeof body === 'string' ? new TextEncoder().encode(body) : body,
      contentType,
    });
  }
  async get(key: string) {
    return this.objects.get(key);
  }
  async list(prefix: string) {
    return [...this.objects.keys()].filter((key) => key.startsWith(prefix)).sort();
  }
  async link(key: string) {
    return `memory://${key}`;
  }
  text(key: string) {
    const object = this.objects.get(key);
    return object ? new TextDecoder().decode(object.body) : undefined;
  }
}

export const unlimitedRate: RateLimiter = {
  async take() {
    return { granted: true };
  },
  async throttled() {},
  async succeeded() {},
};

/**
 * Deliver queued messages in time order, jumping the clock to each one, until no message is left
 * or every job is settled. Returns the number of steps run.
 */
export async function drive(
  deps: EngineDeps,
  queue: MemoryQueue,
  clock: FakeClock,
  options: { maxSteps?: number; until?: (jobs: Job[]) => boolean } = {},
): Promise<number> {
  let steps = 0;
  for (;;) {
    const next = queue.takeNext();
    if (!next) return steps;
    if (next.visibleAt > clock.now()) clock.current = next.visibleAt;
    await runStep(deps, next.message);
    steps++;
    if (steps > (options.maxSteps ?? 10_000)) throw new Error('drive: too many steps');
    if (options.until) {
      const page = await deps.store.list({});
      if (options.until(page.jobs)) return steps;
    }
  }
}

export const settled = (jobs: Job[]) =>
  jobs.every((job) => isTerminal(job.status) || job.status === 'AWAITING_INPUT');
