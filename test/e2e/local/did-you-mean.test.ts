// An unknown workflow or command gets a "did you mean", through the real bin/opflow.js (exit 2).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, runOpflow } from './opflow-process';

const dir = mkdtempSync(join(tmpdir(), 'opflow-did-you-mean-'));
writeFileSync(join(dir, 'x.md'), '# A hinge\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = () => childEnv({ OPFLOW_DB: join(dir, 'opflow.db'), OPFLOW_OUT: join(dir, 'out') });

describe('did you mean', () => {
  it.each([
    ['novelty-chek', 'novelty-check'],
    ['patentcount', 'patent-count'],
    ['tecnical-disclosure', 'technical-disclosure'],
  ])(
    'opflow run %s suggests %s',
    async (typed, meant) => {
      const refused = await runOpflow(['run', typed, 'x.md'], { env: env(), cwd: dir });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`unknown workflow "${typed}" (did you mean ${meant}?)`);
    },
    60_000,
  );

  it('an unknown command suggests the nearest one', async () => {
    const refused = await runOpflow(['statuss'], { env: env(), cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('Did you mean status?');
  }, 60_000);
});
