/** The state file's bytes: atomic replacement, moving a bad file aside, and the lock between sandboxes. */
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discardStateFile, StateFile, StateFileInUseError } from '../../../shared/sandbox/state-file';

let dir: string;
let path: string;
const opened: StateFile[] = [];
const open = () => {
  const file = new StateFile(path);
  opened.push(file);
  return file;
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opflow-state-file-'));
  path = join(dir, 'nested', 'sandbox-state.json');
});
afterEach(() => {
  for (const file of opened.splice(0)) file.unlock();
  rmSync(dir, { recursive: true, force: true });
});

describe('StateFile', () => {
  it('replaces the content whole and leaves no temporary file behind', () => {
    const file = open();
    file.lock();
    expect(file.read()).toBeUndefined();
    file.write('{"a":1}\n');
    file.write('{"a":2}\n');
    expect(file.read()).toBe('{"a":2}\n');
    expect(readdirSync(join(dir, 'nested')).sort()).toEqual([
      'sandbox-state.json',
      'sandbox-state.json.lock',
    ]);
  });

  it('removes a half-written temporary file when taken, leaving the committed content alone', () => {
    const first = open();
    first.lock();
    first.write('committed');
    first.unlock();
    writeFileSync(`${path}.tmp`, 'half of a newer');
    const second = open();
    second.lock();
    expect(existsSync(`${path}.tmp`)).toBe(false);
    expect(second.read()).toBe('committed');
  });

  it('moves a file aside under a new name each time, never over an earlier one', () => {
    const file = open();
    file.lock();
    const at = new Date(Date.UTC(2026, 0, 5, 9, 0, 0));
    file.write('bad 1');
    const first = file.moveAside(at);
    file.write('bad 2');
    const second = file.moveAside(at);
    expect(first).toBe(`${path}.unreadable-2026-01-05T09-00-00-000Z`);
    expect(second).not.toBe(first);
    expect([readFileSync(first, 'utf8'), readFileSync(second, 'utf8')]).toEqual(['bad 1', 'bad 2']);
    expect(file.read()).toBeUndefined();
  });

  it('is refused while another live sandbox holds it, in this process or another', () => {
    const holder = open();
    holder.lock();
    expect(() => open().lock()).toThrow(StateFileInUseError);
    holder.unlock();
    open().lock();

    // A live process that is not this one (the test runner's parent).
    opened.splice(0).forEach((file) => {
      file.unlock();
    });
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: process.ppid, holder: 'elsewhere' }));
    expect(() => open().lock()).toThrow(`in use by process ${process.ppid}`);
  });

  it('takes over a lock left by a process that is gone, or one that cannot be read', () => {
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    expect(gone).toBeGreaterThan(0);
    mkdirSync(join(dir, 'nested'));
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: gone, holder: 'dead' }));
    open().lock();
    opened.splice(0).forEach((held) => {
      held.unlock();
    });
    expect(existsSync(`${path}.lock`)).toBe(false);
    writeFileSync(`${path}.lock`, '{"pid": 1');
    open().lock();
  });

  it.runIf(process.platform === 'linux')(
    'takes over a lock whose process was killed but not reaped yet',
    async () => {
      // `sleep 0.1` ends and stays a zombie: the shell it was started from became `sleep 5` and never waits.
      const shell = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 5'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      try {
        const zombie = Number(
          await new Promise<string>((resolve) =>
            shell.stdout.once('data', (chunk) => resolve(String(chunk))),
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(readFileSync(`/proc/${zombie}/stat`, 'utf8')).toMatch(/\) Z/);
        mkdirSync(join(dir, 'nested'));
        writeFileSync(`${path}.lock`, JSON.stringify({ pid: zombie, holder: 'killed' }));
        open().lock();
      } finally {
        shell.kill('SIGKILL');
      }
    },
  );

  it('discards a file under its lock: refused while a live sandbox holds it', () => {
    const holder = open();
    holder.lock();
    holder.write('tasks');
    expect(() => discardStateFile(path)).toThrow(StateFileInUseError);
    expect(holder.read()).toBe('tasks');
    holder.unlock();
    discardStateFile(path);
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.lock`)).toBe(false);
    discardStateFile(path); // no file: nothing to do
  });

  it('leaves a lock that is no longer its own in place when unlocking', () => {
    const file = open();
    file.lock();
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: process.ppid, holder: 'someone else' }));
    file.unlock();
    expect(JSON.parse(readFileSync(`${path}.lock`, 'utf8')).holder).toBe('someone else');
  });
});
