/**
 * What code writes to this process's stdout and stderr while `work` runs (Powertools' logger writes
 * errors to stderr and the rest to stdout), captured instead of printed. `lines()` reads what has
 * been written so far, for a test that waits for a line while the work goes on.
 */
export async function captureProcessOutput<T>(
  work: (lines: () => string) => Promise<T>,
): Promise<{ result: T; output: string }> {
  const chunks: string[] = [];
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((stream) => stream.write);
  for (const stream of streams) {
    stream.write = ((chunk: string) => {
      chunks.push(String(chunk));
      return true;
    }) as typeof stream.write;
  }
  try {
    const result = await work(() => chunks.join(''));
    return { result, output: chunks.join('') };
  } finally {
    streams.forEach((stream, index) => {
      stream.write = writes[index]!;
    });
  }
}
