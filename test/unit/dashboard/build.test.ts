// The static build of the dashboard for the AWS job API: every file, and the settings naming the API.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JOB_ROUTES } from '../../../infra/lib/job-api';
import { buildDashboard } from '../../../scripts/build-dashboard';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('npm run dashboard:build', () => {
  it('writes the page, its script bundled in one file, and the API in ui/config.json', () => {
    const out = mkdtempSync(join(tmpdir(), 'opflow-dashboard-build-'));
    dirs.push(out);
    const written = buildDashboard({ api: 'https://abc.execute-api.eu-west-1.amazonaws.com/', out });
    expect(written).toEqual(
      expect.arrayContaining(['index.html', 'ui/app.js', 'ui/app.js.map', 'ui/style.css', 'ui/config.json']),
    );
    const settings = JSON.parse(readFileSync(join(out, 'ui', 'config.json'), 'utf8'));
    expect(settings).toMatchObject({
      apiBase: 'https://abc.execute-api.eu-west-1.amazonaws.com',
      // Every page: the AWS HTTP API serves the timeline, batch, schedule and delivery routes.
      timeline: true,
      batches: true,
      schedules: true,
      webhooks: true,
    });
    expect(settings.workflows).toContain('novelty-check');
    // One file with Preact inside: nothing left for a browser to resolve (it has no import map).
    const script = readFileSync(join(out, 'ui', 'app.js'), 'utf8');
    expect(/(^|[;\n])\s*(import|export)[\s{*]|\bimport\(/.test(script)).toBe(false);
    expect(script).toMatch(/Sign in to this opflow server/);
    expect(script).toMatch(/sourceMappingURL=app\.js\.map/);
    expect(readFileSync(join(out, 'index.html'), 'utf8')).not.toMatch(/https?:\/\//);
  });

  it('turns on only pages whose routes the AWS HTTP API has', () => {
    const out = mkdtempSync(join(tmpdir(), 'opflow-dashboard-build-'));
    dirs.push(out);
    buildDashboard({ api: 'https://abc.execute-api.eu-west-1.amazonaws.com', out });
    const settings = JSON.parse(readFileSync(join(out, 'ui', 'config.json'), 'utf8'));
    // What each page calls (dashboard/src), as API Gateway's routes.
    const reads: Record<string, string[]> = {
      timeline: ['GET /jobs/{id}/timeline'],
      batches: [
        'GET /batches',
        'GET /batches/{id}',
        'POST /batches/{id}/redrive',
        'POST /batches/{id}/cancel',
      ],
      schedules: [
        'GET /schedules',
        'POST /schedules/{name}/trigger',
        'POST /schedules/{name}/pause',
        'POST /schedules/{name}/resume',
      ],
      webhooks: ['GET /webhook-deliveries'],
    };
    const served = new Set(JOB_ROUTES.map((route) => `${route.method} ${route.path}`));
    for (const [page, routes] of Object.entries(reads)) {
      expect(settings[page], page).toBe(true);
      for (const route of routes) expect(served.has(route), `${page}: ${route}`).toBe(true);
    }
    // Pages always on: the jobs list, a job, New job and Bulk actions.
    for (const route of ['GET /jobs', 'GET /jobs/{id}', 'POST /jobs', 'POST /jobs/bulk'])
      expect(served.has(route), route).toBe(true);
  });

  it('refuses an API URL that is not https or carries credentials', () => {
    expect(() => buildDashboard({ api: 'http://api.example.com', out: '/nonexistent' })).toThrow(/https/);
    expect(() => buildDashboard({ api: 'https://user:pw@api.example.com', out: '/nonexistent' })).toThrow(
      /credentials/,
    );
    expect(() => buildDashboard({ api: 'not a url', out: '/nonexistent' })).toThrow(/--api/);
  });
});
