/** Loading, live updates or polling, actions and focus: the behaviour every page shares. */
import { type Inputs, useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from './api';
import { followLive, type LiveFilter, type LiveState } from './live';
import type { Api, Settings } from './types';

/** Repeats `load` every `ms` while the tab is visible, and at once when it becomes visible again. */
export function usePolling(load: () => Promise<unknown>, ms: number, active: boolean): void {
  const saved = useRef(load);
  saved.current = load;
  useEffect(() => {
    if (!active) return undefined;
    let timer: ReturnType<typeof setTimeout>;
    let stopped = false;
    const tick = async () => {
      if (document.visibilityState === 'visible') await saved.current().catch(() => {});
      if (!stopped) timer = setTimeout(tick, ms);
    };
    timer = setTimeout(tick, ms);
    const onVisible = () => {
      if (document.visibilityState === 'visible') saved.current().catch(() => {});
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [ms, active]);
}

/**
 * The time now, taken again every `ms` while `active` and the tab is visible: for a figure that moves
 * with the clock alone ("running for 12 s") while no event or poll re-renders the page.
 */
export function useNow(ms: number, active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return undefined;
    setNow(Date.now());
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') setNow(Date.now());
    }, ms);
    return () => clearInterval(timer);
  }, [ms, active]);
  return active ? now : Date.now();
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  load: () => Promise<void>;
  /** Whether the live feed brings the changes (`live`) or the page polls. */
  live: LiveState;
}

/** What a page follows live: its filter on the feed of `api`. */
export interface LiveSource {
  api: Api;
  config: Settings;
  filter: LiveFilter;
}

/** While the feed is live, a poll this rarely still catches anything it could not tell. */
const liveSafetyMs = 30_000;
/** Events coming fast reload the page at most this often (a batch of a thousand jobs moves every second). */
const liveReloadMs = 1000;

/**
 * Calls `reload` (at most once a second) when the feed of `source` has an event; answers the feed's
 * state. No source: `polling`.
 */
export function useLive(source: LiveSource | undefined, reload: () => Promise<unknown>): LiveState {
  const [state, setState] = useState<LiveState>(source ? 'connecting' : 'polling');
  const saved = useRef(reload);
  saved.current = reload;
  const key = source ? `${source.filter.batchId ?? ''}|${source.filter.jobId ?? ''}` : undefined;
  useEffect(() => {
    if (!source) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let again = false;
    const schedule = () => {
      if (timer !== undefined) {
        again = true;
        return;
      }
      timer = setTimeout(async () => {
        await saved.current().catch(() => {});
        timer = undefined;
        if (again) {
          again = false;
          schedule();
        }
      }, liveReloadMs);
    };
    // An answer's text moves no figure: the page's own component shows it (streamed-answer.tsx).
    // A feed that opens (or reopens) reads from then on: what changed since the page's own read,
    // before the feed opened, is read again once it is live.
    let wasLive = false;
    const stop = followLive(
      source.api,
      source.config,
      source.filter,
      (event) => {
        if (event.type !== 'answer') schedule();
      },
      (next) => {
        setState(next);
        if (next === 'live' && !wasLive) schedule();
        wasLive = next === 'live';
      },
    );
    return () => {
      stop();
      clearTimeout(timer);
    };
  }, [source?.api, key]);
  return state;
}

/**
 * What `fetcher` answers, loaded now, again whenever `inputs` change, and every `ms` while
 * `active(data)` holds. A 401 goes to the sign-in form (createApi); other failures to `error`.
 */
export function useLoaded<T>(
  fetcher: () => Promise<T>,
  inputs: Inputs,
  ms: number,
  active: (data: T | undefined) => boolean = () => true,
  live?: LiveSource | undefined,
): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const load = useCallback(async () => {
    try {
      setData(await fetcher());
      setError(undefined);
    } catch (failure) {
      if ((failure as ApiError).status !== 401) setError((failure as Error).message);
    }
  }, inputs);
  useEffect(() => {
    load();
  }, [load]);
  const liveState = useLive(live, load);
  usePolling(load, liveState === 'live' ? liveSafetyMs : ms, Boolean(active(data)));
  return { data, error, load, live: liveState };
}

/** What a notice says: a success or why something failed. */
export interface NoticeText {
  ok?: string | undefined;
  error?: string | undefined;
}

/**
 * A button's action: `run(work)` marks the page busy, shows what `work` answers (the text of a
 * notice) or why it failed, then reloads the page's data.
 */
export function useAction(load: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<NoticeText | undefined>(undefined);
  const run = async (work: () => Promise<string>) => {
    setBusy(true);
    try {
      setNotice({ ok: await work() });
      await load();
    } catch (failure) {
      setNotice({ error: (failure as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return { busy, notice, setNotice, run };
}

/**
 * Moves focus to the page's heading when the page changes, so screen readers announce it. A page
 * that shows a loading heading first (`loaded` false) replaces it once loaded: the focus, lost to
 * the body with the old heading, goes to the new one (and stays wherever else it was moved).
 */
export function useFocusHeading(key: string, loaded = true) {
  const ref = useRef<HTMLHeadingElement>(null);
  const focusedKey = useRef<string | undefined>(undefined);
  useEffect(() => {
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (focusedKey.current !== key || (loaded && lost)) ref.current?.focus();
    focusedKey.current = key;
  }, [key, loaded]);
  return ref;
}
