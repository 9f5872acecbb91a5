/**
 * Reading standard input (`-`) under the same rule as every other read of opflow: a size limit, and
 * the reading stops there, so an endless stream (`yes | opflow ...`) ends at once.
 */
import { tooLarge } from '../files/bounded-read';
import { CliError, ExitCode } from './exit-codes';

/** The limit of a read of standard input that names none (the largest body a command takes). */
export const defaultStdinMaxBytes = 10 * 1024 * 1024;

type StdinStream = AsyncIterable<Uint8Array | string> & { isTTY?: boolean; destroy(): void };

/**
 * `CliIo.readStdin` over a stream. Given a limit, it stops once more than `maxBytes` bytes have come
 * and returns them, so the caller refuses the text naming its own flag; without one, more than
 * `defaultStdinMaxBytes` is refused here (exit 2).
 */
export function stdinReader(
  stdin: StdinStream,
  stderr: NodeJS.WritableStream,
): (maxBytes?: number) => Promise<string> {
  return async (maxBytes) => {
    // On a terminal `-` would otherwise wait in silence for the text.
    if (stdin.isTTY) stderr.write('opflow: reading the input from the terminal; end it with Ctrl-D\n');
    const limit = maxBytes ?? defaultStdinMaxBytes;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of stdin) {
      const bytes = Buffer.from(chunk);
      chunks.push(bytes);
      size += bytes.byteLength;
      if (size > limit) {
        stdin.destroy();
        if (maxBytes === undefined) {
          throw new CliError(`standard input: ${tooLarge(size, limit, true)}`, ExitCode.usage);
        }
        break;
      }
    }
    return Buffer.concat(chunks, size).toString('utf8');
  };
}
