/**
 * Worker deaths on purpose: a step worker built from source (the same createStepWorker the bundle
 * runs) whose engine ports and Open Platform client are wrapped so that, right after a chosen kind
 * of I/O succeeds, the instance "dies": every later I/O of that invocation fails and the invocation
 * ends in an error, so the event source deletes nothing. A dead instance is replaced by a fresh
 * one (a cold start), as Lambda would.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { WorkerHandler } from '../../../../scripts/lambda/sqs-event-source';
import type { EngineDeps } from '../../../../shared/engine/deps';
import { createLambdaRuntime } from '../../../../shared/runtime/lambda/runtime';
import { createStepWorker } from '../../../../shared/runtime/lambda/step-worker';

export const crashPoints = [
  'after-upstream-call',
  'after-report-write',
  'after-commit',
  'after-enqueue',
  'before-delete',
] as const;
export type CrashPoint = (typeof crashPoints)[number];

export class WorkerCrashed extends Error {
  override readonly name = 'WorkerCrashed';
}

interface Life {
  dead: boolean;
  /** The job and version the worker is on (from its last read), so each step dies at most once. */
  current?: string;
}

export class CrashPlan {
  point: CrashPoint | undefined;
  /** Occurrences of the point so far, and how many of them killed the worker. */
  occurrences = 0;
  crashes = 0;
  /** Of `crashes`, the deaths right after a billed call's answer (a create, an update or a read; not a download). */
  paidCallCrashes = 0;
  private readonly diedAt = new Set<string>();

  /** Crash at occurrences 1, 1 + every, 1 + 2 × every, ... of `point` (default every third). */
  constructor(private every = 3) {}

  aim(point: CrashPoint | undefined): void {
    this.point = point;
    this.occurrences = 0;
    this.crashes = 0;
    this.paidCallCrashes = 0;
  }

  /**
   * Counts an occurrence of `point` and kills the worker on every `every`-th, but never twice on
   * the same step of the same job: a real worker gets through eventually, and so must this one.
   */
  private hit(point: CrashPoint, life: Life, paidCall = false): void {
    if (this.point !== point || life.dead) return;
    const where = `${point} ${life.current ?? ''}`;
    if (this.diedAt.has(where)) return;
    this.occurrences += 1;
    if ((this.occurrences - 1) % this.every === 0) {
      life.dead = true;
      this.crashes += 1;
      if (paidCall) this.paidCallCrashes += 1;
      this.diedAt.add(where);
    }
  }

  /** The event source asks before deleting: false loses the deletes (death before the delete). */
  deleteAfter = (invocation: { bodies: string[] }): boolean => {
    const life: Life = { dead: false, current: invocation.bodies.join(' ') };
    this.hit('before-delete', life);
    return !life.dead;
  };

  /** A step-worker instance that dies as planned and comes back cold. */
  worker(env: Record<string, string>): WorkerHandler {
    const life: Life = { dead: false };
    const build = () => {
      const runtime = createLambdaRuntime({ env });
      return createStepWorker({ deps: this.wrap(runtime.deps, life), observability: runtime.observability });
    };
    let instance = build();
    return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
      const response = await instance.handle(event, context);
      if (life.dead) {
        life.dead = false;
        instance = build();
        throw new WorkerCrashed('the worker died during this invocation');
      }
      return response;
    };
  }

  private wrap(deps: EngineDeps, life: Life): EngineDeps {
    const port = <T extends object>(target: T, after?: (method: string) => void): T =>
      new Proxy(target, {
        get: (object, property, receiver) => {
          const value = Reflect.get(object, property, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (life.dead) throw new WorkerCrashed(`dead worker tried ${String(property)}`);
            const settled = (result: unknown) => {
              after?.(String(property));
              return result;
            };
            const result = (value as (...a: unknown[]) => unknown).apply(object, args);
            if (!(result instanceof Promise)) return settled(result);
            return result.then(settled, (error: unknown) => {
              after?.(String(property));
              throw error;
            });
          };
        },
      });
    const store = port(deps.store, (method) => method === 'commit' && this.hit('after-commit', life));
    return {
      ...deps,
      store: Object.assign(Object.create(store) as typeof store, {
        get: async (id: string) => {
          const job = await store.get(id);
          // The step and its poll, not the version: a billed call's claim moves the version, so a
          // step retaken after a crash is read at another version than the one that died.
          life.current = job ? `${job.id}@${job.step}/${job.polls}` : id;
          return job;
        },
      }),
      queue: port(deps.queue, (method) => method.startsWith('send') && this.hit('after-enqueue', life)),
      reports: port(deps.reports, (method) => method === 'put' && this.hit('after-report-write', life)),
      client: port(deps.client, (method) =>
        ['call', 'stream', 'fetchDocument'].includes(method)
          ? this.hit('after-upstream-call', life, method !== 'fetchDocument')
          : undefined,
      ),
      keys: port(deps.keys),
      rateLimiter: port(deps.rateLimiter),
    };
  }
}
