/**
 * Writing one of a batch's outputs as its rows are produced: through the report store's `putStream`
 * when it has one (a file renamed into place, a multipart upload to S3), so a 100,000-row summary is
 * never held whole in memory; otherwise the text is collected and `put` at the end.
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { ReportStore } from '../engine/ports';

export interface OutputWriter {
  /** Appends text; resolves when the writer can take more. */
  write(text: string): Promise<void>;
  /** Finishes the object (it replaces the old one only now). */
  end(): Promise<void>;
  /** Gives up: the old object stays. */
  abort(error: Error): void;
}

/** Text is handed on in pieces of about this size. */
const pieceBytes = 64 * 1024;

export function openOutput(store: ReportStore, key: string, contentType: string): OutputWriter {
  let pending = '';
  if (!store.putStream) {
    const pieces: string[] = [];
    return {
      async write(text) {
        pending += text;
        if (pending.length >= pieceBytes) {
          pieces.push(pending);
          pending = '';
        }
      },
      async end() {
        pieces.push(pending);
        await store.put(key, pieces.join(''), contentType);
      },
      abort() {},
    };
  }
  const stream = new PassThrough({ highWaterMark: 4 * pieceBytes });
  const done = store.putStream(key, stream, contentType);
  // A failure before the end surfaces at the next write or at end().
  done.catch(() => {});
  const flush = async () => {
    const piece = pending;
    pending = '';
    if (piece !== '' && !stream.write(piece)) await Promise.race([once(stream, 'drain'), done]);
  };
  return {
    async write(text) {
      pending += text;
      if (pending.length >= pieceBytes) await flush();
    },
    async end() {
      await flush();
      stream.end();
      await done;
    },
    abort(error) {
      stream.destroy(error);
    },
  };
}
