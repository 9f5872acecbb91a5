/**
 * One build shared by processes (scripts/lambda/build-once.ts, which the aws e2e harness uses for
 * the Lambda bundles): real processes asking at once, a dead builder's lock, a changed input, a
 * failed build.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildOnce } from '../../../scripts/lambda/build-once';
import { lastJsonLine, repoRoot, runChild, tsScriptArgs } from '../../support/child-process';

/** In a process of its own: buildOnce on `home`, the build writing the input's text after a pause. */
async function askInAnotherProcess(
  home: string,
  input: string,
): Promise<{ built: boolean; dir: string; text: string }> {
  const script = `import { buildOnce } from './scripts/lambda/build-once.ts';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
const [home, input] = process.argv.slice(-2);
const wanted = await readFile(input, 'utf8');
const result = await buildOnce({
  home,
  pollMs: 50,
  fresh: async (record) => record.text === wanted,
  build: async (dir) => {
    // Long enough that the other process asks while this one builds.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await writeFile(join(dir, 'out.txt'), wanted);
    return { text: wanted };
  },
});
console.log(JSON.stringify({ built: result.built, dir: result.dir, text: await readFile(join(result.dir, 'out.txt'), 'utf8') }));`;
  return lastJsonLine(await runChild(process.execPath, tsScriptArgs(script, home, input), { cwd: repoRoot }));
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  return (await runChild(process.execPath, ['-e', '0'])).pid;
}

describe('buildOnce: one build shared by processes', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'opflow-build-once-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('two processes asking at once: exactly one builds, the other waits for that build and reuses it; a changed input builds again', async () => {
    const home = join(root, 'two');
    const input = join(root, 'two-input.txt');
    await writeFile(input, 'first');
    const answers = await Promise.all([askInAnotherProcess(home, input), askInAnotherProcess(home, input)]);
    expect(answers.map((answer) => answer.built).sort()).toEqual([false, true]);
    expect(answers[0]?.dir).toBe(answers[1]?.dir);
    expect(answers.map((answer) => answer.text)).toEqual(['first', 'first']);
    const entries = await readdir(home);
    // One build, its record, no lock left, no partial folder.
    expect(entries.filter((name) => !name.endsWith('.json')).sort()).toEqual([
      answers[0]?.dir.split('/').at(-1),
    ]);

    // Unchanged: reused in this process too.
    const again = await buildOnce({
      home,
      fresh: async (record: { text: string }) => record.text === 'first',
      build: async () => {
        throw new Error('must not build: nothing changed');
      },
    });
    expect(again).toMatchObject({ built: false, dir: answers[0]?.dir });

    await writeFile(input, 'second');
    const changed = await askInAnotherProcess(home, input);
    expect(changed).toMatchObject({ built: true, text: 'second' });
    expect(changed.dir).not.toBe(answers[0]?.dir);
    // The replaced build is kept for whoever still reads it.
    expect(await readFile(join(answers[0]?.dir as string, 'out.txt'), 'utf8')).toBe('first');
  }, 60_000);

  it('takes over the lock of a builder that died (its pid is gone) instead of waiting for it', async () => {
    const home = join(root, 'dead');
    await buildOnce({ home, fresh: async () => false, build: async () => ({}) });
    await writeFile(
      join(home, 'build.lock'),
      JSON.stringify({
        pid: await deadPid(),
        host: hostname(),
        at: Date.now(),
        token: 'x',
      }),
    );
    const result = await buildOnce({
      home,
      pollMs: 10,
      staleLockMs: 3_600_000,
      fresh: async (record: { n?: number }) => record.n === 2,
      build: async () => ({ n: 2 }),
    });
    expect(result).toMatchObject({ built: true, record: { n: 2 } });
    expect(await readdir(home)).not.toContain('build.lock');
  });

  it('takes over a lock older than staleLockMs even when its holder still runs', async () => {
    const home = join(root, 'old');
    await buildOnce({ home, fresh: async () => false, build: async () => ({}) });
    // This process is alive: its lock is stale only by age.
    await writeFile(
      join(home, 'build.lock'),
      JSON.stringify({
        pid: process.pid,
        host: hostname(),
        at: Date.now() - 5_000,
        token: 'x',
      }),
    );
    const result = await buildOnce({
      home,
      pollMs: 10,
      staleLockMs: 1_000,
      fresh: async (record: { n?: number }) => record.n === 3,
      build: async () => ({ n: 3 }),
    });
    expect(result).toMatchObject({ built: true, record: { n: 3 } });
  });

  it("waits for a live holder's lock even when this process's Date is faked a year ahead (the aws e2e fakes Date)", async () => {
    const home = join(root, 'live');
    await buildOnce({ home, fresh: async () => false, build: async () => ({}) });
    const lock = join(home, 'build.lock');
    await writeFile(lock, JSON.stringify({ pid: process.pid, host: hostname(), at: Date.now(), token: 'x' }));
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 365 * 24 * 3600_000 });
    try {
      let looks = 0;
      let builds = 0;
      let released: () => void = () => {};
      const lookedFiveTimes = new Promise<void>((resolve) => {
        released = resolve;
      });
      const result = buildOnce({
        home,
        pollMs: 10,
        fresh: async (record: { n?: number }) => {
          looks += 1;
          if (looks === 5) released();
          return record.n === 4;
        },
        build: async () => {
          builds += 1;
          return { n: 4 };
        },
      });
      await lookedFiveTimes;
      // Taking the lock over would have built at the next look.
      expect(builds).toBe(0);
      await rm(lock);
      expect(await result).toMatchObject({ built: true, record: { n: 4 } });
      expect(builds).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a failed build leaves no partial folder and no lock: the next call builds', async () => {
    const home = join(root, 'failed');
    await expect(
      buildOnce({
        home,
        fresh: async () => false,
        build: async () => {
          throw new Error('esbuild failed');
        },
      }),
    ).rejects.toThrow('esbuild failed');
    expect(await readdir(home)).toEqual([]);
    const result = await buildOnce({
      home,
      fresh: async (record: { ok?: boolean }) => record.ok === true,
      build: async () => ({ ok: true }),
    });
    expect(result.built).toBe(true);
  });
});
