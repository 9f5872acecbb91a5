// Standard input is read under the same rule as every other read: a limit, and the reading stops there.
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../../shared/cli/exit-codes';
import { defaultStdinMaxBytes, stdinReader } from '../../../shared/cli/stdin';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** An endless stream of `y\n` that counts what was pulled from it. */
function endless() {
  const line = Buffer.alloc(64 * 1024, 'y\n');
  const stream = Object.assign(
    new Readable({
      read() {
        stream.pulled += line.length;
        this.push(line);
      },
    }),
    { pulled: 0 },
  );
  return stream;
}

describe('reading standard input', () => {
  it("processIo().readStdin() with no limit refuses an endless stream past 10 MB and stops reading (the real process's stdin)", async () => {
    const script = `import { processIo } from './shared/cli/main.ts';
processIo().readStdin().then((text) => console.log('read', text.length), (error) => { console.log('refused', error.message, error.exitCode); process.exit(0); });`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: repoRoot,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const line = Buffer.alloc(64 * 1024, 'y\n');
    let written = 0;
    const pump = () => {
      // At most 100 MB: without a limit the read would take it all and answer `read 104857600`.
      while (child.stdin.writable && written < 100 * 1024 * 1024) {
        written += line.length;
        if (!child.stdin.write(line)) return void child.stdin.once('drain', pump);
      }
      child.stdin.end();
    };
    child.stdin.on('error', () => {});
    pump();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stdout.trim()).toBe('refused standard input: too large (over 10 MB; at most 10 MB) 2');
    expect(written).toBeLessThan(50 * 1024 * 1024);
  }, 60_000);

  it('given a limit, stops just past it and hands the text back for the caller to refuse with its flag', async () => {
    const stream = endless();
    const text = await stdinReader(stream, process.stderr)(1000);
    expect(text.length).toBeGreaterThan(1000);
    expect(stream.pulled).toBeLessThan(1024 * 1024);
  });

  it('without a limit, a stream within the default is read whole; one past it is refused (exit 2)', async () => {
    const small = await stdinReader(Readable.from([Buffer.from('TTL:(hinge)')]), process.stderr)();
    expect(small).toBe('TTL:(hinge)');
    const stream = endless();
    const refused = await stdinReader(stream, process.stderr)().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CliError);
    expect((refused as CliError).exitCode).toBe(2);
    expect(stream.pulled).toBeLessThan(defaultStdinMaxBytes + 1024 * 1024);
  });
});
