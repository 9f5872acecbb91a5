/**
 * Event streams: a StreamPlan written as `text/event-stream` frames over (wall-clock) time, in one
 * of four encodings, with `: keep-alive` comments, and the stream faults (stall, early end, a cut
 * frame, a frame that is not JSON).
 *
 * - `delta`: envelope frames whose `data.output.content` is the new piece; a finished frame with
 *   empty content, usage and references.
 * - `cumulative`: the same, but `content` is the text so far; the finished frame holds all of it.
 * - `openai`: OpenAI-like chunks `{choices:[{delta:{content}}]}`, then one with `finish_reason`,
 *   one with `usage`, then `[DONE]`.
 * - `openai-envelope`: the OpenAI-like chunks wrapped in the platform's envelope, then `[DONE]`.
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StreamPlan, StreamVariant } from './operations/contract';

export interface StreamFault {
  kind: 'stall-stream' | 'early-end-stream' | 'truncated' | 'malformed';
  /** Frames sent before the fault (clamped so it happens before the finish frame). */
  afterChunks: number;
}

export type StreamEnd = 'finished' | 'stalled' | 'ended-early' | 'truncated' | 'closed';

const KEEP_ALIVE = ': keep-alive\n\n';
const KEEP_ALIVE_EVERY = 4;

/** The `data:` payloads of a plan in a variant, in order (the last ones finish the stream). */
export function streamFrames(
  plan: StreamPlan,
  variant: StreamVariant,
  created: number,
): { frames: string[]; content: number } {
  const envelope = (data: unknown) => JSON.stringify({ data, status: true, error_code: 0 });
  if (variant === 'delta' || variant === 'cumulative') {
    let soFar = '';
    const frames = plan.pieces.map((piece) => {
      soFar += piece;
      return envelope(plan.envelopeData(variant === 'delta' ? piece : soFar, 'running', false));
    });
    frames.push(envelope(plan.envelopeData(variant === 'delta' ? '' : soFar, plan.finishStatus, true)));
    return { frames, content: plan.pieces.length };
  }
  const base = {
    id: `chatcmpl-sandbox-${created}`,
    object: 'chat.completion.chunk',
    created,
    model: 'opflow-sandbox',
    ...plan.chunkFields,
  };
  const chunks: unknown[] = plan.pieces.map((piece, index) => ({
    ...base,
    choices: [
      {
        index: 0,
        delta: index === 0 ? { role: 'assistant', content: piece } : { content: piece },
        finish_reason: null,
      },
    ],
  }));
  chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  chunks.push({
    ...base,
    choices: [],
    usage: {
      prompt_tokens: plan.tokens.input,
      completion_tokens: plan.tokens.output,
      total_tokens: plan.tokens.input + plan.tokens.output,
    },
  });
  const frames = chunks.map((chunk) => (variant === 'openai' ? JSON.stringify(chunk) : envelope(chunk)));
  frames.push('[DONE]');
  return { frames, content: plan.pieces.length };
}

export async function writeEventStream(
  res: ServerResponse,
  frames: readonly string[],
  contentFrames: number,
  options: { chunkDelayMs: number; fault?: StreamFault },
): Promise<StreamEnd> {
  const faultAt = options.fault ? Math.min(options.fault.afterChunks, contentFrames) : -1;
  const alive = () => !res.destroyed && !res.writableEnded;
  res.write(KEEP_ALIVE);
  for (let index = 0; index < frames.length; index++) {
    if (!alive()) return 'closed';
    if (index === faultAt && options.fault) {
      const frame = `data: ${frames[index]}\n\n`;
      switch (options.fault.kind) {
        case 'stall-stream':
          return 'stalled';
        case 'early-end-stream':
          res.end();
          return 'ended-early';
        case 'truncated':
          res.write(frame.slice(0, Math.max(8, Math.floor(frame.length / 2))), () => res.socket?.destroy());
          return 'truncated';
        case 'malformed':
          res.write('data: {"data":{"output":{"content": <sandbox: not JSON>\n\n');
          break;
      }
    }
    res.write(`data: ${frames[index]}\n\n`);
    if (index % KEEP_ALIVE_EVERY === KEEP_ALIVE_EVERY - 1) res.write(KEEP_ALIVE);
    if (options.chunkDelayMs > 0) await sleep(options.chunkDelayMs);
  }
  if (alive()) res.end();
  return 'finished';
}
