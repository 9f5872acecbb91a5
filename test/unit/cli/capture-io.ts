/**
 * A CliIo for tests: captures what the command writes, feeds standard input, and lets a test
 * deliver Ctrl-C.
 */
import { PassThrough, Readable } from 'node:stream';
import type { CliIo } from '../../../shared/cli/main';
import { stdinReader } from '../../../shared/cli/stdin';

export interface CapturedIo extends CliIo {
  out(): string;
  err(): string;
  interrupt(): void;
}

export function captureIo(
  options: { env?: Record<string, string | undefined>; cwd?: string; stdin?: string } = {},
): CapturedIo {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const handlers = new Set<() => void>();
  return {
    stdout,
    stderr,
    // The same limits as the real standard input's.
    readStdin: (maxBytes) => stdinReader(Readable.from([Buffer.from(options.stdin ?? '')]), stderr)(maxBytes),
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    onInterrupt: (handler) => {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    out: () => out,
    err: () => err,
    interrupt: () => {
      for (const handler of [...handlers]) handler();
    },
  };
}
