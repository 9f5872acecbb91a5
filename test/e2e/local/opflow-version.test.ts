// `opflow --version` through the real bin/opflow.js, run from the JavaScript build the tests' global
// set-up made current (a stale build would say so on standard error).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnv, repoRoot, runOpflow } from './opflow-process';

const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };

describe('opflow --version', () => {
  it('prints the version of package.json and nothing else', { timeout: 60_000 }, async () => {
    for (const flag of ['--version', '-V']) {
      const result = await runOpflow([flag], { env: childEnv({}), cwd: repoRoot });
      expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it('is listed in --help', { timeout: 60_000 }, async () => {
    const result = await runOpflow(['--help'], { env: childEnv({}), cwd: repoRoot });
    expect(result.stdout).toMatch(/-V, --version +print the version of opflow/);
  });
});
