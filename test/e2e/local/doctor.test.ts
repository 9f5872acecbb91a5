// `opflow doctor` through the real bin: a places check that cannot pass fails fast, naming the place
// and what to do; a fine folder that does not exist yet is found writable.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, runOpflow } from './opflow-process';

const dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-doctor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('opflow doctor, local places', () => {
  it.runIf(existsSync('/proc/self'))(
    'fails within seconds on a reports folder in a virtual filesystem (--out /proc/x), naming it',
    async () => {
      const started = Date.now();
      const result = await runOpflow(['doctor', '--out', '/proc/x', '--json'], {
        env: childEnv({ OPFLOW_DB: join(dir, 'state', 'opflow.db') }),
        cwd: dir,
      });
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(result.code, result.stderr).toBe(5);
      const { checks } = JSON.parse(result.stdout) as {
        checks: { name: string; status: string; detail: string; fix?: string }[];
      };
      const reports = checks.find((check) => check.name === 'reports')!;
      expect(reports.status).toBe('fail');
      expect(reports.detail).toContain('/proc/x');
      expect(reports.fix).toMatch(/choose a folder on a writable disk/);
      // Nothing was called: the places are checked first.
      expect(checks.map((check) => check.name)).toEqual(['database', 'reports']);
    },
  );

  it('finds a folder that does not exist yet writable', async () => {
    const out = join(dir, 'not', 'yet', 'there');
    const result = await runOpflow(['doctor', '--out', out, '--db', join(dir, 'db', 'opflow.db'), '--json'], {
      env: childEnv({}),
      cwd: dir,
    });
    const { checks } = JSON.parse(result.stdout) as { checks: { name: string; status: string }[] };
    expect(checks.find((check) => check.name === 'reports')?.status).toBe('ok');
  });
});
