/**
 * The live feed as the pages use it: an EventSource on `GET /events` opened with a short-lived token
 * from `POST /events/token` (an EventSource cannot send the Authorization header), one per filter
 * however many hooks listen. When the stream ends (its token expired, the server restarted, the
 * network dropped) a new token is fetched and the stream resumed after the last event id seen, with
 * a growing pause between failures. A server that hands out no feed token (404: the AWS API, whose
 * HTTP API cannot stream) is long-polled instead: `GET /events?wait=20` with the page's own
 * Authorization header answers the events after the last cursor as JSON, or nothing after 20 s, and
 * is asked again at once. A server with neither, or a browser without EventSource, leaves the pages
 * polling.
 */
import type { Api, Settings } from './types';

/** What a page follows: a batch, a job, or (neither) everything the caller may see. */
export interface LiveFilter {
  batchId?: string | undefined;
  jobId?: string | undefined;
}

/** `live`: events arrive; `polling`: no feed (or it keeps failing), the page polls; `connecting`. */
export type LiveState = 'connecting' | 'live' | 'polling';

export interface LiveEvent {
  /** `answer`: a streamed answer's new text (`data.answer`: step, offset, text, length). */
  type: 'job' | 'step' | 'answer' | 'batch' | 'reset';
  data: unknown;
}

interface Feed {
  listeners: Set<(event: LiveEvent) => void>;
  states: Set<(state: LiveState) => void>;
  state: LiveState;
  stop(): void;
}

const eventTypes = ['job', 'step', 'answer', 'batch', 'reset'] as const;
/** After this many failures in a row the pages poll while the feed keeps trying. */
const failuresBeforePolling = 2;
const maxPauseMs = 30_000;

const feedsByApi = new WeakMap<Api, Map<string, Feed>>();

function openFeed(api: Api, config: Settings, filter: LiveFilter): Feed {
  const feed: Feed = { listeners: new Set(), states: new Set(), state: 'connecting', stop: () => {} };
  const setState = (state: LiveState) => {
    if (feed.state === state) return;
    feed.state = state;
    for (const listener of feed.states) listener(state);
  };
  if (typeof EventSource === 'undefined') {
    setState('polling');
    return feed;
  }
  let source: EventSource | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastEventId: string | undefined;
  let failures = 0;
  let stopped = false;

  const deliver = (type: LiveEvent['type'], data: unknown) => {
    for (const listener of feed.listeners) listener({ type, data });
  };
  const pauseAfterFailure = () => Math.min(maxPauseMs, 1000 * 2 ** Math.min(failures - 1, 5));
  // The long poll: each answer's events, then at once the next request after its cursor.
  const longPoll = async () => {
    while (!stopped) {
      const query = new URLSearchParams({ wait: '20' });
      if (filter.batchId) query.set('batchId', filter.batchId);
      if (filter.jobId) query.set('jobId', filter.jobId);
      if (lastEventId) query.set('lastEventId', lastEventId);
      let answer: { events: { type: LiveEvent['type']; data: unknown }[]; cursor: string };
      try {
        answer = await api('GET', `/events?${query}`);
      } catch (failure) {
        const status = (failure as { status?: number }).status;
        if (status === 404 || status === 405) return setState('polling');
        failures += 1;
        if (failures >= failuresBeforePolling) setState('polling');
        await new Promise((resolve) => {
          timer = setTimeout(resolve, pauseAfterFailure());
        });
        continue;
      }
      if (stopped) return;
      failures = 0;
      setState('live');
      lastEventId = answer.cursor;
      for (const event of answer.events)
        if ((eventTypes as readonly string[]).includes(event.type)) deliver(event.type, event.data);
    }
  };
  const retry = () => {
    failures += 1;
    if (failures >= failuresBeforePolling) setState('polling');
    timer = setTimeout(connect, pauseAfterFailure());
  };
  const connect = async () => {
    if (stopped) return;
    let token: string;
    try {
      ({ token } = await api<{ token: string }>('POST', '/events/token', {}));
    } catch (failure) {
      // No feed token on this server (404, 405): its long poll, or polling. Anything else: try again later.
      const status = (failure as { status?: number }).status;
      if (status === 404 || status === 405) void longPoll();
      else retry();
      return;
    }
    if (stopped) return;
    const query = new URLSearchParams({ token });
    if (filter.batchId) query.set('batchId', filter.batchId);
    if (filter.jobId) query.set('jobId', filter.jobId);
    if (lastEventId) query.set('lastEventId', lastEventId);
    source = new EventSource(`${config.apiBase.replace(/\/+$/, '')}/events?${query}`);
    source.onopen = () => {
      failures = 0;
      setState('live');
    };
    for (const type of eventTypes) {
      source.addEventListener(type, (message) => {
        const event = message as MessageEvent<string>;
        if (event.lastEventId) lastEventId = event.lastEventId;
        let data: unknown;
        try {
          data = JSON.parse(event.data);
        } catch {
          return;
        }
        deliver(type, data);
      });
    }
    source.onerror = () => {
      // Reopened here rather than by the browser: the URL's token may have expired.
      source?.close();
      if (!stopped) retry();
    };
  };
  connect();
  feed.stop = () => {
    stopped = true;
    clearTimeout(timer);
    source?.close();
  };
  return feed;
}

/**
 * Follows the feed for `filter`: `onEvent` is told each event; `onState` each change of state (and
 * the current one at once). Returns the function that stops listening; the last listener closes it.
 */
export function followLive(
  api: Api,
  config: Settings,
  filter: LiveFilter,
  onEvent: (event: LiveEvent) => void,
  onState: (state: LiveState) => void,
): () => void {
  let feeds = feedsByApi.get(api);
  if (!feeds) {
    feeds = new Map();
    feedsByApi.set(api, feeds);
  }
  const key = `${filter.batchId ?? ''}|${filter.jobId ?? ''}`;
  let feed = feeds.get(key);
  if (!feed) {
    feed = openFeed(api, config, filter);
    feeds.set(key, feed);
  }
  feed.listeners.add(onEvent);
  feed.states.add(onState);
  onState(feed.state);
  const opened = feed;
  return () => {
    opened.listeners.delete(onEvent);
    opened.states.delete(onState);
    if (opened.listeners.size === 0) {
      opened.stop();
      feeds.delete(key);
    }
  };
}
