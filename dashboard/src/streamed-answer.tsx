/**
 * A streamed answer (LLM chat, encyclopedia Q&A) as it arrives: the `answer` events of the job's
 * feed (GET /events, ?jobId=) grow the text while the job runs, then the final answer from the
 * job's result.json replaces it. For screen readers a polite live region is told each new
 * finished sentence once (never the whole text again), and "Answer complete" at the end.
 */
import { useEffect, useReducer, useState } from 'preact/hooks';
import { followLive } from './live';
import type { Api, JobView, ReportAnswer, Settings } from './types';

interface AnswerState {
  step?: string | undefined;
  text: string;
  /** How much of `text` the live region was told. */
  told: number;
  /** What the live region says, one addition each (keyed by where it starts). */
  said: { at: number; text: string }[];
  /** A part came beyond the text held (joined late): the final answer shows it whole. */
  gap: boolean;
}

type AnswerAction =
  | { type: 'part'; step: string; offset: number; text: string }
  | { type: 'final'; text: string };

const initial: AnswerState = { text: '', told: 0, said: [], gap: false };

/** The end of the last finished sentence (or line) in `text` after `from`, or `from` when none. */
function sentenceEnd(text: string, from: number): number {
  let end = from;
  for (const match of text.slice(from).matchAll(/[.!?;:](?=\s)|\n/g)) end = from + (match.index ?? 0) + 1;
  return end;
}

/** Tells the live region what finished since it was last told (`all`: the rest too). */
function tell(state: AnswerState, all = false): AnswerState {
  const end = all ? state.text.length : sentenceEnd(state.text, state.told);
  const part = state.text.slice(state.told, end).trim();
  if (part === '') return { ...state, told: Math.max(state.told, end) };
  return { ...state, told: end, said: [...state.said, { at: state.told, text: part }] };
}

function reduce(state: AnswerState, action: AnswerAction): AnswerState {
  if (action.type === 'final') {
    const told = tell({ ...state, text: action.text, told: Math.min(state.told, action.text.length) }, true);
    return { ...told, gap: false };
  }
  const { step, offset, text } = action;
  // A part already held: the log may deliver a change twice (a slow write is written again).
  if (step === state.step && state.text.startsWith(text, offset)) return state;
  // A new stream (another step, or the step sent again) starts over.
  if (offset === 0 || step !== state.step) return tell({ ...initial, step, text, gap: offset !== 0 });
  if (offset > state.text.length) return tell({ ...state, text: state.text + text, gap: true });
  // An overlap (the text so far, then parts it already held): cut back to the offset.
  const next = state.text.slice(0, offset) + text;
  return tell({ ...state, text: next, told: Math.min(state.told, next.length) });
}

/** The text of a stream step's output in result.json (`steps.<step>`: `{text, ...}`). */
function textOf(output: unknown): string | undefined {
  if (typeof output === 'string') {
    try {
      return textOf(JSON.parse(output));
    } catch {
      return undefined;
    }
  }
  const text = (output as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : undefined;
}

export function StreamedAnswer(props: { api: Api; config: Settings; job: JobView; streamSteps: string[] }) {
  const { api, config, job, streamSteps } = props;
  const [state, dispatch] = useReducer(reduce, initial);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const finished = job.status === 'SUCCEEDED';
  const running = ['QUEUED', 'RUNNING', 'WAITING'].includes(job.status);

  useEffect(
    () =>
      followLive(
        api,
        config,
        { jobId: job.id },
        (event) => {
          if (event.type !== 'answer') return;
          const { answer } = event.data as { answer: { step: string; offset: number; text: string } };
          dispatch({ type: 'part', step: answer.step, offset: answer.offset, text: answer.text });
        },
        () => {},
      ),
    [api, job.id],
  );

  // Once the job is done, its stored answer is the one shown: the whole of it, as committed.
  useEffect(() => {
    if (!finished) return undefined;
    let live = true;
    (async () => {
      try {
        const { files } = await api<ReportAnswer>('GET', `/jobs/${encodeURIComponent(job.id)}/report`);
        const file = files.find((candidate) => candidate.name === 'result.json');
        const target = file?.href ?? file?.url;
        if (!target) return;
        // A path of this server (opflow serve), or a presigned link that takes no Authorization (aws).
        const result = /^https?:/.test(target)
          ? ((await (await fetch(target)).json()) as unknown)
          : await api<unknown>('GET', target);
        const steps = (result as { steps?: Record<string, unknown> } | null)?.steps ?? {};
        const text = streamSteps.map((step) => textOf(steps[step])).find((found) => found !== undefined);
        if (live && text !== undefined) dispatch({ type: 'final', text });
      } catch (error) {
        if (live) setFailure((error as Error).message);
      }
    })();
    return () => {
      live = false;
    };
  }, [finished, job.id]);

  if (state.text === '' && !running) return null;
  const streaming = running && state.text !== '';
  return (
    <section class="card streamed-answer" aria-labelledby="streamed-answer-heading">
      <h2 id="streamed-answer-heading">Answer</h2>
      <p class="muted small" data-answer-state={streaming ? 'streaming' : finished ? 'final' : 'waiting'}>
        {streaming
          ? `arriving as it is written: ${state.text.length.toLocaleString()} characters so far`
          : finished
            ? 'the final answer, as the job keeps it'
            : running
              ? 'waiting for the first words…'
              : ''}
        {state.gap && !finished ? ' (this page joined late: the whole answer shows when the job ends)' : ''}
        {failure ? ` (the final answer could not be read: ${failure})` : ''}
      </p>
      <div class="answer-text" aria-busy={streaming ? 'true' : 'false'} data-length={state.text.length}>
        {state.text}
      </div>
      <div class="visually-hidden" aria-live="polite" aria-atomic="false" aria-relevant="additions">
        {state.said.map((part) => (
          <span key={part.at}>{part.text} </span>
        ))}
        {finished && state.text !== '' ? <span key="done">Answer complete.</span> : null}
      </div>
    </section>
  );
}
