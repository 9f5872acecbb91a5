/**
 * The callback sender on aws, behind the scheduled Lambda `callback-sender` (every minute, and a
 * few passes within each run so that the 5-second retry is not a minute late): the same sender as
 * locally (shared/callbacks/sender.ts) over the DynamoDB outbox and the per-tenant signing secrets
 * in Secrets Manager (`OPFLOW_CALLBACK_SECRET_PREFIX<tenant>`), wired in ../aws/callbacks.ts.
 */
import type { Context } from 'aws-lambda';
import { type CallbackSenderDeps, runCallbackSender, type SenderRunResult } from '../../callbacks/sender';
import { engineLogger, type Observability } from './observability';

export interface CallbackSenderHandler {
  handle(event: unknown, context: Context): Promise<SenderRunResult>;
}

/**
 * Runs passes until less than `reserveMs` of the invocation is left (at most `passes`, one every
 * `spacingMs`), so retries due within the minute go out within seconds.
 */
export function createCallbackSenderHandler(options: {
  deps: CallbackSenderDeps;
  observability: Observability;
  passes?: number;
  spacingMs?: number;
  reserveMs?: number;
}): CallbackSenderHandler {
  const { logger } = options.observability;
  return {
    async handle(_event, context) {
      logger.addContext(context);
      const deps = { ...options.deps, log: engineLogger(logger) };
      const total: SenderRunResult = { attempted: 0, delivered: 0, waiting: 0, deferred: 0 };
      const passes = options.passes ?? 11;
      for (let pass = 0; pass < passes; pass++) {
        const result = await runCallbackSender(deps);
        total.attempted += result.attempted;
        total.delivered += result.delivered;
        total.waiting = result.waiting;
        const left = context.getRemainingTimeInMillis?.() ?? 0;
        if (pass === passes - 1 || left < (options.reserveMs ?? 20_000)) break;
        await new Promise((resolve) => setTimeout(resolve, options.spacingMs ?? 5_000));
      }
      logger.info('callback sender done', { ...total });
      return total;
    },
  };
}
