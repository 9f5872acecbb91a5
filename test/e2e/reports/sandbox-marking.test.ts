/**
 * Sandbox data is marked as such wherever it appears, and a done input is skipped only when it was
 * done for the same tenant on the same upstream. Through the real bin: a novelty check on the
 * built-in sandbox (report.md, report.html looked at in chromium, result.json, status, list, a
 * batch's summary.csv and index.html), then the same input with a key against an upstream of the
 * test's own that records what it receives: it is called, and its result carries no sandbox mark.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'csv-parse/sync';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordedBin, startRecordedBin } from '../../support/recorded-bin';
import { repoRoot } from '../local/opflow-process';

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
  let world: RecordedBin;
  let sandboxJob: JobJson;

  beforeAll(async () => {
    world = await startRecordedBin('marking', 'sk-test-own-upstream-7f3a', 300);
    mkdirSync(join(world.dir, 'inputs'));
    copyFileSync(
      join(repoRoot, 'examples', 'disclosures', disclosure),
      join(world.dir, 'inputs', disclosure),
    );
    const run = await world.sandbox('run', 'novelty-check', join('inputs', disclosure), '--json');
    expect(run.code, run.stderr).toBe(0);
    sandboxJob = JSON.parse(run.stdout).jobs[0];
  }, 180_000);
  afterAll(async () => {
    await world?.close();
  });

  it('records the sandbox on the job and says so in report.md, result.json, status and list', async () => {
    expect(sandboxJob).toMatchObject({
      status: 'SUCCEEDED',
      tenant: 'default',
      upstream: { kind: 'sandbox' },
    });
    const markdown = readFileSync(world.out(sandboxJob.id, 'report.md'), 'utf8');
    // The notice right under the title, before the verdict.
    expect(markdown.split('\n').slice(0, 4).join('\n')).toMatch(
      /> \*\*Sandbox data: not real publications\.\*\*/,
    );
    expect(markdown).toMatch(/upstream: sandbox \(simulated data, not real publications\)/);
    const result = JSON.parse(readFileSync(world.out(sandboxJob.id, 'result.json'), 'utf8'));
    expect(result.sandbox).toMatch(/^Sandbox data: not real publications\./);
    expect(result.job.upstream).toEqual({ kind: 'sandbox' });
    const status = await world.sandbox('status', sandboxJob.id);
    expect(status.stdout).toMatch(/^upstream +sandbox \(simulated data, not real publications\)$/m);
    const list = await world.sandbox('list');
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
      await page.goto(pathToFileURL(world.out(sandboxJob.id, 'report.html')).href);
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
    const run = await world.sandbox('ingest', 'inputs', '--workflow', 'novelty-check', '--batch', 'sb');
    expect(run.code, run.stderr).toBe(0);
    const rows = parse(readFileSync(world.out('batches', 'sb', 'summary.csv'), 'utf8'), { columns: true });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'SUCCEEDED', upstream: 'sandbox (simulated data)' });
    const index = readFileSync(world.out('batches', 'sb', 'index.html'), 'utf8');
    expect(index).toMatch(
      /<section id="sandbox" class="banner" role="alert"><strong>Sandbox data: not real publications\.<\/strong> Every item ran/,
    );
    // Where batches are listed, the sandbox batch says so in the words of the job list.
    const listed = await world.sandbox('batch');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^sb +FINISHED +novelty-check .* sandbox$/m);
    expect(listed.stdout).toMatch(/upstream sandbox: simulated data, not real publications/);
  }, 180_000);

  it('runs the same input again once a key is set: the new upstream is called, its result unmarked', async () => {
    const run = await world.opflow('run', 'novelty-check', join('inputs', disclosure), '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/already done/);
    expect(run.stderr).toMatch(
      /done before on another upstream, so run now on http:\/\/127\.0\.0\.1:\d+, key [0-9a-f]{8}/,
    );
    const keyed: JobJson = JSON.parse(run.stdout).jobs[0];
    expect(keyed.id).not.toBe(sandboxJob.id);
    expect(keyed).toMatchObject({
      status: 'SUCCEEDED',
      upstream: { kind: 'platform', baseUrl: world.upstream.url },
    });
    expect(keyed.upstream?.keyFingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(keyed)).not.toContain(world.upstream.apiKey);
    const submits = world.upstream.requests.filter((request) => request.method === 'POST');
    expect(submits.length).toBeGreaterThanOrEqual(5);
    const markdown = readFileSync(world.out(keyed.id, 'report.md'), 'utf8');
    expect(markdown).not.toMatch(/Sandbox data/);
    expect(readFileSync(world.out(keyed.id, 'report.html'), 'utf8')).not.toMatch(/role="alert"/);

    // Now it is done on this upstream: skipped, and the upstream is not called again.
    const before = world.upstream.requests.length;
    const again = await world.opflow('run', 'novelty-check', join('inputs', disclosure), '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/1 input is already done, not run again/);
    expect(JSON.parse(again.stdout).jobs[0].id).toBe(keyed.id);
    expect(world.upstream.requests.length).toBe(before);

    // Another tenant's done input is not this tenant's.
    const other = await world.opflow(
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
    expect(world.upstream.requests.length).toBeGreaterThan(before);
  }, 240_000);

  it('ingests the sandbox batch again on the keyed upstream, and marks each row with its upstream', async () => {
    const before = world.upstream.requests.length;
    const run = await world.opflow('ingest', 'inputs', '--workflow', 'novelty-check', '--batch', 'sb');
    expect(run.code, run.stderr).toBe(0);
    expect(world.upstream.requests.length).toBeGreaterThan(before);
    const rows: Record<string, string>[] = parse(
      readFileSync(world.out('batches', 'sb', 'summary.csv'), 'utf8'),
      {
        columns: true,
      },
    );
    expect(rows.map((row: Record<string, string>) => row.upstream)).toEqual([
      'sandbox (simulated data)',
      expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+ key [0-9a-f]{8}$/),
    ]);
    // The batch lists both upstreams: still marked, as one of its rows is simulated data.
    const listed = await world.opflow('batch', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const sb = JSON.parse(listed.stdout).batches.find((batch: { id: string }) => batch.id === 'sb');
    expect(sb).toMatchObject({
      sandbox: true,
      upstreams: [{ kind: 'sandbox' }, { kind: 'platform', baseUrl: world.upstream.url }],
    });
  }, 180_000);
});
