/**
 * `opflow batch <id> --download <dir>` onto a full disk, through the real bin/opflow.js: a 40 KB tmpfs
 * mounted in a mount namespace of its own (unshare -m) is the disk. The error names the flag and the
 * file, says why in words, and loses nothing: no partial file is left, every file written is whole,
 * the batch is unchanged, and the same download onto a disk with room completes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, opflowBin, runOpflow } from '../../e2e/local/opflow-process';

let dir: string;
const env = () =>
  childEnv({ OPFLOW_DB: join(dir, 'opflow.db'), OPFLOW_OUT: join(dir, 'out'), OPFLOW_SANDBOX_SPEED: '1000' });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-disk-full-'));
  const lines = Array.from({ length: 6 }, (_, i) =>
    JSON.stringify({ id: `q${i}`, query: `TTL:(hinge${i})` }),
  );
  writeFileSync(join(dir, 'm.jsonl'), `${lines.join('\n')}\n`);
  mkdirSync(join(dir, 'small-disk'));
});
afterAll(() => {
  killRunningOpflows();
  rmSync(dir, { recursive: true, force: true });
});

/** Every file under `root`, relative to it. */
function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

/** `opflow batch dl --download small-disk/out` with a 40 KB tmpfs mounted on small-disk. */
function downloadOntoSmallDisk(): Promise<{ code: number | null; stderr: string }> {
  const script =
    'mount -t tmpfs -o size=40k tmpfs "$1" || exit 99; exec "$2" "$3" batch dl --download "$1/out"';
  const child = spawn(
    'unshare',
    ['-m', 'sh', '-c', script, 'sh', join(dir, 'small-disk'), process.execPath, opflowBin],
    { env: env(), cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('batch --download onto a full disk', () => {
  it('names --download and the file, in words, exit 5; nothing partial, nothing lost, a retry with room completes', async () => {
    const ingested = await runOpflow(['ingest', 'm.jsonl', '--workflow', 'patent-count', '--batch', 'dl'], {
      env: env(),
      cwd: dir,
    });
    expect(ingested.code, ingested.stderr).toBe(0);
    const before = JSON.parse((await runOpflow(['batch', 'dl', '--json'], { env: env(), cwd: dir })).stdout);

    const full = await downloadOntoSmallDisk();
    expect(full.code, `unshare/mount is needed for this test:\n${full.stderr}`).not.toBe(99);
    expect(full.code, full.stderr).toBe(5);
    expect(full.stderr).toMatch(
      new RegExp(
        `--download ${join(dir, 'small-disk')}/out: cannot write ${join(dir, 'small-disk')}/out/reports/\\w+/[\\w.]+: the disk is full \\(ENOSPC\\)`,
      ),
    );
    expect(full.stderr).toContain('no partial file is left');
    expect(full.stderr).not.toMatch(/^\s+at /m);
    expect(full.stderr).not.toMatch(/^Error: ENOSPC/m);

    const after = JSON.parse((await runOpflow(['batch', 'dl', '--json'], { env: env(), cwd: dir })).stdout);
    expect(after.batch).toEqual(before.batch);

    // The same download with room: every report and output.
    const roomy = await runOpflow(['batch', 'dl', '--download', 'roomy'], { env: env(), cwd: dir });
    expect(roomy.code, roomy.stderr).toBe(0);
    const all = filesUnder(join(dir, 'roomy'));
    expect(all).toContain('index.html');
    expect(all.filter((file) => file.endsWith('/result.json'))).toHaveLength(6);
  }, 120_000);

  it('what the full disk kept is whole: each file equals its copy from a disk with room, no .partial', async () => {
    const script =
      'mount -t tmpfs -o size=40k tmpfs "$1" || exit 99; "$2" "$3" batch dl --download "$1/out"; cp -r "$1/out" "$4"';
    const child = spawn(
      'unshare',
      [
        '-m',
        'sh',
        '-c',
        script,
        'sh',
        join(dir, 'small-disk'),
        process.execPath,
        opflowBin,
        join(dir, 'kept'),
      ],
      { env: env(), cwd: dir, stdio: 'ignore' },
    );
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).not.toBe(99);
    const kept = filesUnder(join(dir, 'kept'));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.filter((file) => file.endsWith('.partial'))).toEqual([]);
    for (const file of kept) {
      expect(readFileSync(join(dir, 'kept', file)), file).toEqual(readFileSync(join(dir, 'roomy', file)));
    }
  }, 120_000);
});
