/**
 * The live feed of `opflow serve`: one hub reading the database's change log (any process's
 * commits), woken at once by this process's own, the token route and the `GET /events` mount.
 */
import type { BatchStore } from '../engine/batch-store';
import type { ApiRoute } from '../http/api-route';
import { createEventsHub, type EventsHub } from '../http/events-hub';
import { eventsMount, eventsTokenRoutes } from '../http/events-routes';
import { createEventsTokens, defaultEventsTokenTtlMs } from '../http/events-token';
import type { ServerMount } from '../http/node-server';
import { currentViewOf } from '../ingest/batch-view';
import type { Backend } from '../runtime/backend';
import { CliError, ExitCode } from './exit-codes';

/** The variable setting how long a feed token lasts, in seconds (default 300). */
export const eventsTokenTtlVariable = 'OPFLOW_EVENTS_TOKEN_TTL';

/** The feed tokens' lifetime from the environment: 1 to 3,600 seconds, default 300. */
export function eventsTokenTtlMs(env: Readonly<Record<string, string | undefined>>): number {
  const value = env[eventsTokenTtlVariable]?.trim();
  if (value === undefined || value === '') return defaultEventsTokenTtlMs;
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < 1 || seconds > 3600)
    throw new CliError(
      `${eventsTokenTtlVariable} must be a whole number of seconds from 1 to 3600, not "${value}"`,
      ExitCode.usage,
    );
  return seconds * 1000;
}

export interface ServeEvents {
  hub: EventsHub;
  routes: ApiRoute[];
  mount: ServerMount;
  /** Ends every stream and stops reading the change log. */
  close(): Promise<void>;
}

export async function prepareServeEvents(
  backend: Backend,
  batches: BatchStore,
  serveToken: string | undefined,
  ttlMs: number,
): Promise<ServeEvents> {
  const { store, clock, log } = backend.deps;
  const now = () => clock.now();
  const answers = await backend.partialAnswers();
  const hub = createEventsHub({
    feed: await backend.changeFeed(),
    partialAnswer: (jobId) => answers.read(jobId),
    batchView: async (id) => {
      const batch = await batches.get(id);
      return batch && currentViewOf(store, batch, now());
    },
    onError: (error) => log?.warn('events: reading the change log failed', { error: String(error) }),
  });
  const stopWaking = backend.onJobChange(() => hub.wake());
  // Tokens are signed with a secret of this process: they end with it (and within their lifetime).
  const tokens = createEventsTokens({ ttlMs });
  return {
    hub,
    routes: eventsTokenRoutes({ tokens, now }),
    mount: eventsMount({ hub, tokens, serveToken, now }),
    close: async () => {
      stopWaking();
      await hub.close();
    },
  };
}
