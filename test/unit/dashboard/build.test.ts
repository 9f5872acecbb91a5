// The static build of the dashboard for the AWS job API: every file, and the settings naming the API.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildDashboard } from '../../../scripts/build-dashboard';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('npm run dashboard:build', () => {
  it('writes the page, its modules with relative imports only, and the API in ui/config.json', () => {
    const out = mkdtempSync(join(tmpdir(), 'opflow-dashboard-build-'));
    dirs.push(out);
    const written = buildDashboard({ api: 'https://abc.execute-api.eu-west-1.amazonaws.com/', out });
    expect(written).toEqual(
      expect.arrayContaining([
        'index.html',
        'ui/app.js',
        'ui/vendor/preact.mjs',
        'ui/vendor/hooks.mjs',
        'ui/config.json',
      ]),
    );
    const settings = JSON.parse(readFileSync(join(out, 'ui', 'config.json'), 'utf8'));
    expect(settings).toMatchObject({
      apiBase: 'https://abc.execute-api.eu-west-1.amazonaws.com',
      timeline: false,
    });
    expect(settings.workflows).toContain('novelty-check');
    // A browser without an import map resolves only relative module paths.
    for (const name of ['ui/app.js', 'ui/vendor/hooks.mjs']) {
      const imports = [...readFileSync(join(out, name), 'utf8').matchAll(/from\s*["']([^"']+)["']/g)].map(
        (m) => m[1],
      );
      expect(imports.length).toBeGreaterThan(0);
      for (const path of imports) expect(path, name).toMatch(/^\.\//);
    }
    expect(readFileSync(join(out, 'index.html'), 'utf8')).not.toMatch(/https?:\/\//);
  });

  it('refuses an API URL that is not https or carries credentials', () => {
    expect(() => buildDashboard({ api: 'http://api.example.com', out: '/nonexistent' })).toThrow(/https/);
    expect(() => buildDashboard({ api: 'https://user:pw@api.example.com', out: '/nonexistent' })).toThrow(
      /credentials/,
    );
    expect(() => buildDashboard({ api: 'not a url', out: '/nonexistent' })).toThrow(/--api/);
  });
});
