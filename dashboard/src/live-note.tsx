/** Says whether a page's figures come live from the event feed or by polling. */
import type { LiveState } from './live';

export function LiveNote({ state }: { state: LiveState }) {
  const text =
    state === 'live'
      ? 'updates live'
      : state === 'connecting'
        ? 'connecting…'
        : 'refreshes every few seconds';
  return (
    <span class={`live-note ${state}`} data-live={state}>
      {text}
    </span>
  );
}
