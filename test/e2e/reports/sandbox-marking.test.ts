/**
 * Sandbox data is marked as such wherever it appears, and a done input is skipped only when it was
 * done for the same tenant on the same upstream. Through the real bin: a novelty check on the
 * built-in sandbox (report.md, report.html looked at in chromium, result.json, status, list, a
 * batch's summary.csv and index.html), then the same input with a key against an upstream of the
 * test's own that records what it receives: it is called, and its result carries no sandbox mark.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'csv-parse/sync';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, killRunningOpflows, repoRoot, runOpflow } from '../local/opflow-process';
import { type RecordingUpstream, startRecordingUpstream } from './recording-upstream';

const chromiumPath = process.env.OPFLOW_CHROMIUM ?? '/usr/bin/chromium';
const artefacts = join(repoRoot, 'test-artifacts', 'reports');
const disclosure = 'hot-swap-battery-inspection-drone.md';

interface JobJson {
  id: string;
  status: string;
  tenant: string;
  upstream?: { kind: string; baseUrl?: string; keyFingerprint?: string };
}

describe('sandbox data is marked, and the skip of done inputs keys on the upstream and the tenant', () => {
  let dir: string;
  let sandboxEnv: NodeJS.ProcessEnv;
  let keyedEnv: NodeJS.ProcessEnv;
  let upstream: RecordingUpstream;
  let sandboxJob: JobJson;
  const opflow = (env: NodeJS.ProcessEnv, ...args: string[]) => runOpflow(args, { env, cwd: dir });
  const out = (...parts: string[]) => join(dir, 'out', ...parts);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-marking-'));
    mkdirSync(join(dir, 'inputs'));
    copyFileSync(join(repoRoot, 'examples', 'disclosures', disclosure), join(dir, 'inputs', disclosure));
    const common = { OPFLOW_SANDBOX_SPEED: '300', OPFLOW_DB: join(dir, 'jobs.db'), OPFLOW_OUT: out() };
    upstream = await startRecordingUpstream('sk-test-own-upstream-7f3a');
    sandboxEnv = childEnv(common);
    keyedEnv = childEnv({ ...common, OPFLOW_API_KEY: upstream.apiKey, OPFLOW_BASE_URL: upstream.url });
    const run = await opflow(sandboxEnv, 'run', 'novelty-check', join('inputs', disclosure), '--json');
    expect(run.code, run.stderr).toBe(0);
    sandboxJob = JSON.parse(run.stdout).jobs[0];
  }, 180_000);
  afterAll(async () => {
    killRunningOpflows();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records the sandbox on the job and says so in report.md, result.json, status and list', async () => {
    expect(sandboxJob).toMatchObject({
      status: 'SUCCEEDED',
      tenant: 'default',
      upstream: { kind: 'sandbox' },
    });
    const markdown = readFileSync(out(sandboxJob.id, 'report.md'), 'utf8');
    // The notice right under the title, before the verdict.
    expect(markdown.split('\n').slice(0, 4).join('\n')).toMatch(
      /> \*\*Sandbox data: not real publications\.\*\*/,
    );
    expect(markdown).toMatch(/upstream: sandbox \(simulated data, not real publications\)/);
    const result = JSON.parse(readFileSync(out(sandboxJob.id, 'result.json'), 'utf8'));
    expect(result.sandbox).toMatch(/^Sandbox data: not real publications\./);
    expect(result.job.upstream).toEqual({ kind: 'sandbox' });
    const status = await opflow(sandboxEnv, 'status', sandboxJob.id);
    expect(status.stdout).toMatch(/^upstream +sandbox \(simulated data, not real publications\)$/m);
    const list = await opflow(sandboxEnv, 'list');
    expect(list.stdout).toMatch(new RegExp(`${sandboxJob.id} .* sandbox +${disclosure}`));
    expect(list.stdout).toMatch(/UPSTREAM sandbox: simulated data, not real publications/);
  });

  it('shows a visible banner at the top of report.html (looked at in chromium)', async () => {
    mkdirSync(artefacts, { recursive: true });
    const browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
      await page.goto(pathToFileURL(out(sandboxJob.id, 'report.html')).href);
      const banner = page.getByRole('alert');
      await expect(banner.textContent()).resolves.toMatch(/^Sandbox data: not real publications\./);
      const box = await banner.boundingBox();
      const title = await page.locator('h1').boundingBox();
      // Above the title, in the first screenful, and in a colour that stands out.
      expect(box!.y).toBeLessThan(title!.y);
      expect(box!.y + box!.height).toBeLessThan(700);
      expect(
        await banner.evaluate(
          (node) =>
            (
              globalThis as unknown as { getComputedStyle(e: object): { backgroundColor: string } }
            ).getComputedStyle(node).backgroundColor,
        ),
      ).toBe('rgb(255, 243, 205)');
      await page.screenshot({ path: join(artefacts, 'sandbox-banner.png') });
    } finally {
      await browser.close();
    }
  });

  it('marks every row of a sandbox batch in summary.csv and puts a banner on its index', async () => {
    const run = await opflow(sandboxEnv, 'ingest', 'inputs', '--workflow', 'novelty-check', '--batch', 'sb');
    expect(run.code, run.stderr).toBe(0);
    const rows = parse(readFileSync(out('batches', 'sb', 'summary.csv'), 'utf8'), { columns: true });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'SUCCEEDED', upstream: 'sandbox (simulated data)' });
    const index = readFileSync(out('batches', 'sb', 'index.html'), 'utf8');
    expect(index).toMatch(
      /<section id="sandbox" class="banner" role="alert"><strong>Sandbox data: not real publications\.<\/strong> Every item ran/,
    );
  }, 180_000);

  it('runs the same input again once a key is set: the new upstream is called, its result unmarked', async () => {
    const run = await opflow(keyedEnv, 'run', 'novelty-check', join('inputs', disclosure), '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/already done/);
    expect(run.stderr).toMatch(
      /done before on another upstream, so run now on http:\/\/127\.0\.0\.1:\d+, key [0-9a-f]{8}/,
    );
    const keyed: JobJson = JSON.parse(run.stdout).jobs[0];
    expect(keyed.id).not.toBe(sandboxJob.id);
    expect(keyed).toMatchObject({
      status: 'SUCCEEDED',
      upstream: { kind: 'platform', baseUrl: upstream.url },
    });
    expect(keyed.upstream?.keyFingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(keyed)).not.toContain(upstream.apiKey);
    const submits = upstream.requests.filter((request) => request.method === 'POST');
    expect(submits.length).toBeGreaterThanOrEqual(5);
    const markdown = readFileSync(out(keyed.id, 'report.md'), 'utf8');
    expect(markdown).not.toMatch(/Sandbox data/);
    expect(readFileSync(out(keyed.id, 'report.html'), 'utf8')).not.toMatch(/role="alert"/);

    // Now it is done on this upstream: skipped, and the upstream is not called again.
    const before = upstream.requests.length;
    const again = await opflow(keyedEnv, 'run', 'novelty-check', join('inputs', disclosure), '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/1 input is already done, not run again/);
    expect(JSON.parse(again.stdout).jobs[0].id).toBe(keyed.id);
    expect(upstream.requests.length).toBe(before);

    // Another tenant's done input is not this tenant's.
    const other = await opflow(
      keyedEnv,
      'run',
      'novelty-check',
      join('inputs', disclosure),
      '--tenant',
      'acme',
      '--json',
    );
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).not.toMatch(/already done/);
    expect(JSON.parse(other.stdout).jobs[0]).toMatchObject({ tenant: 'acme', status: 'SUCCEEDED' });
    expect(upstream.requests.length).toBeGreaterThan(before);
  }, 240_000);

  it('ingests the sandbox batch again on the keyed upstream, and marks each row with its upstream', async () => {
    const before = upstream.requests.length;
    const run = await opflow(keyedEnv, 'ingest', 'inputs', '--workflow', 'novelty-check', '--batch', 'sb');
    expect(run.code, run.stderr).toBe(0);
    expect(upstream.requests.length).toBeGreaterThan(before);
    const rows: Record<string, string>[] = parse(readFileSync(out('batches', 'sb', 'summary.csv'), 'utf8'), {
      columns: true,
    });
    expect(rows.map((row: Record<string, string>) => row.upstream)).toEqual([
      'sandbox (simulated data)',
      expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+ key [0-9a-f]{8}$/),
    ]);
  }, 180_000);
});
