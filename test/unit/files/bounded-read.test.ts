import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  FileRefused,
  openRegularFileStream,
  readBoundedStream,
  readRegularFile,
} from '../../../shared/files/bounded-read';

const dir = mkdtempSync(join(tmpdir(), 'opflow-bounded-'));

describe('readRegularFile', () => {
  it('reads a regular file within the limit', async () => {
    writeFileSync(join(dir, 'ok.txt'), 'hello');
    expect((await readRegularFile(join(dir, 'ok.txt'), { maxBytes: 5 })).toString()).toBe('hello');
  });

  it('refuses a larger file before reading it, naming the file and the limit', async () => {
    writeFileSync(join(dir, 'big.txt'), 'x'.repeat(2048));
    await expect(
      readRegularFile(join(dir, 'big.txt'), { maxBytes: 1024, shownAs: 'big.txt' }),
    ).rejects.toThrow('big.txt: too large (2 KB; at most 1 KB)');
  });

  it('refuses a FIFO at once instead of waiting for a writer', async () => {
    const fifo = join(dir, 'pipe.txt');
    execFileSync('mkfifo', [fifo]);
    const started = Date.now();
    await expect(readRegularFile(fifo, { maxBytes: 1024 })).rejects.toThrow(/not a regular file/);
    await expect(openRegularFileStream(fifo, 0)).rejects.toBeInstanceOf(FileRefused);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses devices, /proc files and folders, and says why in words', async () => {
    await expect(readRegularFile('/dev/zero', { maxBytes: 1024 })).rejects.toThrow(/not a regular file/);
    await expect(readRegularFile('/proc/self/status', { maxBytes: 1024 })).rejects.toThrow(/file of \/proc/);
    await expect(readRegularFile(dir, { maxBytes: 1024 })).rejects.toThrow(/is a folder/);
    await expect(readRegularFile(join(dir, 'none'), { maxBytes: 1024 })).rejects.toThrow(
      /none: no such file$/,
    );
  });
});

describe('readBoundedStream', () => {
  it('stops reading an endless stream at the limit', async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 65536;
        this.push(Buffer.alloc(65536, 121));
      },
    });
    await expect(readBoundedStream(endless, { maxBytes: 1024 * 1024, shownAs: '--body -' })).rejects.toThrow(
      '--body -: too large (over 1 MB; at most 1 MB)',
    );
    expect(produced).toBeLessThan(4 * 1024 * 1024);
  });
});
