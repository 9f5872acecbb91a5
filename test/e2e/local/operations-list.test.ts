// `opflow operations` with no arguments, through the real bin/opflow.js: every group once, with all
// its operations under it, however the catalogue interleaves them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, runOpflow } from './opflow-process';

const dir = mkdtempSync(join(tmpdir(), 'opflow-operations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('opflow operations', () => {
  it('prints each group header once, with every operation of the group under it', async () => {
    const listed = await runOpflow(['operations'], { env: childEnv({}), cwd: dir });
    expect(listed.code, listed.stderr).toBe(0);
    const headers = listed.stdout.split('\n').filter((line) => /^\S.*:$/.test(line));
    expect(headers.length).toBeGreaterThan(10);
    expect(new Set(headers).size).toBe(headers.length);
    expect(headers.filter((line) => line === 'Tech Solution Exploration:')).toHaveLength(1);
    const summary = listed.stdout.trim().split('\n').at(-1) ?? '';
    expect(summary).toContain(`in ${headers.length} groups`);
    const json = await runOpflow(['operations', '--json'], { env: childEnv({}), cwd: dir });
    const rows = JSON.parse(json.stdout) as { group: string }[];
    expect(new Set(rows.map((row) => row.group.trim())).size).toBe(headers.length);
  }, 60_000);
});
