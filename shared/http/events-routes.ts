/**
 * The live feed on `opflow serve`: `POST /events/token` (a route of the job API, behind the normal
 * bearer token) hands out a short-lived signed token, and `GET /events` (a mount: it streams) answers
 * `text/event-stream` with the job, step and batch events the caller may see, resumable with
 * `Last-Event-ID` (or `?lastEventId=` for a new EventSource), a heartbeat comment every 15 seconds,
 * and the stream ended when its token expires (the client asks for another and resumes).
 *
 * `GET /events` takes `?token=` from a browser, or the server's own bearer token in the header from a
 * script; a server with no token (loopback only) answers without. Tokens are never logged: the
 * request log holds the path only.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ChangeFilter } from '../engine/change-feed';
import type { EventsHub, FeedEvent } from './events-hub';
import { eventIdSchema, eventsQuerySchema, eventsTokenBodySchema } from './events-schemas';
import { EventsTokenError, type EventsTokens } from './events-token';
import { ApiError, type ApiRoute, apiRoute, json, parse } from './job-api';
import type { ServerMount } from './node-server';

/** A listener is sent more only once its unsent events are under this. */
const readyBelowBytes = 256 * 1024;
/** A listener whose unsent events pass this is dropped (it resumes with Last-Event-ID). */
const maxBufferedBytes = 4 * 1024 * 1024;

export interface EventsRouteOptions {
  tokens: EventsTokens;
  /** Default: the wall clock. */
  now?: (() => number) | undefined;
}

/** `POST /events/token`: a feed token for the caller's tenant (or the one asked, for an operator). */
export function eventsTokenRoutes(options: EventsRouteOptions): ApiRoute[] {
  const now = options.now ?? Date.now;
  return [
    apiRoute('createEventsToken', async (_params, _request, context) => {
      const body = parse(eventsTokenBodySchema, context.body(), 'body');
      if (context.tenant !== undefined && body.tenant !== undefined && body.tenant !== context.tenant)
        throw new ApiError(
          403,
          'forbidden',
          `body.tenant: this caller may read only tenant ${context.tenant}`,
        );
      const tenant = context.tenant ?? body.tenant;
      const { token, expiresAt } = options.tokens.issue({ tenant }, now());
      return json(201, {
        token,
        expiresAt: new Date(expiresAt).toISOString(),
        ...(tenant === undefined ? {} : { tenant }),
      });
    }),
  ];
}

export interface EventsMountOptions extends EventsRouteOptions {
  hub: EventsHub;
  /** The server's bearer token (OPFLOW_SERVE_TOKEN), when it has one. */
  serveToken?: string | undefined;
  /** Between heartbeat comments. Default: 15 seconds. */
  heartbeatMs?: number | undefined;
}

/** One event as `text/event-stream` lines. */
export function formatEvent(event: FeedEvent): string {
  const id = event.id === undefined ? '' : `id: ${event.id}\n`;
  return `${id}event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The tenant scope of a request, and when its permission ends; refused when it has none. */
function authorise(
  req: IncomingMessage,
  token: string | undefined,
  options: EventsMountOptions,
  now: number,
): { tenant: string | undefined; until: number | undefined } {
  if (token !== undefined) {
    try {
      const claims = options.tokens.verify(token, now);
      return { tenant: claims.tenant, until: claims.exp };
    } catch (error) {
      if (error instanceof EventsTokenError)
        throw new ApiError(401, 'unauthorized', `query.token: ${error.message}`, {
          'www-authenticate': 'Bearer realm="opflow", error="invalid_token"',
        });
      throw error;
    }
  }
  if (options.serveToken === undefined) return { tenant: undefined, until: undefined };
  const given = /^Bearer[ ]+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  if (given !== undefined && timingSafeEqual(digest(given), digest(options.serveToken)))
    return { tenant: undefined, until: undefined };
  throw new ApiError(
    401,
    'unauthorized',
    'GET /events needs ?token= (from POST /events/token) or the header Authorization: Bearer <token>',
    { 'www-authenticate': 'Bearer realm="opflow"' },
  );
}

/** The filter of a request: its query, held to the token's (or the caller's) tenant. */
export function filterOf(
  query: Pick<ReturnType<typeof eventsQuerySchema.parse>, 'tenant' | 'batchId' | 'jobId'>,
  scope: string | undefined,
): ChangeFilter {
  if (scope !== undefined && query.tenant !== undefined && query.tenant !== scope)
    throw new ApiError(403, 'forbidden', `query.tenant: this token reads only tenant ${scope}`);
  return { tenant: scope ?? query.tenant, batchId: query.batchId, jobId: query.jobId };
}

/** `GET /events` on node:http (see the file's comment). */
export function eventsMount(options: EventsMountOptions): ServerMount {
  const now = options.now ?? Date.now;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  return {
    matches: (path, method) => path === '/events' && method === 'GET',
    public: true,
    async handle(req, res) {
      const target = req.url ?? '';
      const search = new URLSearchParams(target.includes('?') ? target.slice(target.indexOf('?') + 1) : '');
      const query = parse(eventsQuerySchema, Object.fromEntries(search), 'query');
      const scope = authorise(req, query.token, options, now());
      const filter = filterOf(query, scope.tenant);
      const header = req.headers['last-event-id'];
      const lastEventId =
        typeof header === 'string' && header !== ''
          ? parse(eventIdSchema, header, 'header.Last-Event-ID')
          : query.lastEventId === undefined
            ? undefined
            : parse(eventIdSchema, query.lastEventId, 'query.lastEventId');

      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write('retry: 2000\n\n');
      let unsubscribe = () => {};
      let finish = () => {};
      const done = new Promise<void>((resolve) => {
        finish = resolve;
      });
      const end = () => {
        unsubscribe();
        clearInterval(heartbeat);
        clearTimeout(expiry);
        if (!res.writableEnded) res.end();
        finish();
      };
      const send = (event: FeedEvent) => {
        if (res.writableEnded || res.destroyed) return false;
        res.write(formatEvent(event));
        if (res.writableLength <= maxBufferedBytes) return true;
        setImmediate(end);
        return false;
      };
      const heartbeat = setInterval(() => {
        // A client that reads nothing for minutes is let go: its buffer does not grow for ever.
        if (res.writableLength > maxBufferedBytes) end();
        else if (!res.writableEnded) res.write(': heartbeat\n\n');
      }, heartbeatMs);
      // The permission ends with the token: the client asks for a new one and resumes.
      const expiry = setTimeout(
        end,
        scope.until === undefined ? 2 ** 31 - 1 : Math.max(0, scope.until - now()),
      );
      req.once('close', end);
      res.once('close', end);
      // A reader that was held back (its buffer full) is sent more as soon as it has read.
      res.on('drain', () => options.hub.wake());
      unsubscribe = await options.hub.subscribe(
        { filter, send, end, ready: () => res.writableLength < readyBelowBytes },
        lastEventId,
      );
      if (res.writableEnded || res.destroyed) unsubscribe();
      await done;
    },
  };
}
