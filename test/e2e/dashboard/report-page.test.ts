// A job's report opened full page from the dashboard, in a real browser (Debian's chromium through
// playwright-core) against the real `opflow serve` on the built-in sandbox: it shows the report the
// whole window wide and high, the page's content security policy holds (nothing loads from another
// origin, neither from the page nor from inside the report's frame, which runs no script), and its
// back link is reached and followed by keyboard. The page is axe clean; screenshots go to
// test-artifacts/dashboard/.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows } from '../local/opflow-process';
import { accessibilityProblems, jobApiClient, screenshot, servedDashboard } from './browser';

const token = 'dashboard-report-page-token-0123456789';

describe("a job's report, full page", () => {
  let dir: string;
  let url: string;
  let browser: Browser;
  let page: Page;
  /** Another origin: any request that reaches it is a load the policy should have stopped. */
  let outside: Server;
  let outsideUrl: string;
  const reachedOutside: string[] = [];
  const api = jobApiClient(() => url, token);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-dashboard-report-'));
    outside = createServer((req, res) => {
      reachedOutside.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'image/png', 'access-control-allow-origin': '*' }).end();
    });
    await new Promise<void>((done) => outside.listen(0, '127.0.0.1', done));
    outsideUrl = `http://127.0.0.1:${(outside.address() as AddressInfo).port}`;
    ({ url, browser, page } = await servedDashboard(dir, token));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    outside?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens the report the whole window wide from the job, loads nothing from elsewhere, and goes back by keyboard', async () => {
    const { job } = await api<{ job: { id: string } }>('POST', '/jobs', {
      workflow: 'novelty-check',
      input: {
        text: '# Folding helmet\nA bicycle helmet of six rigid shell segments joined by textile hinges, folding flat to the size of a book; a magnetic buckle locks it open.',
      },
      label: 'folding helmet',
    });
    // Every request the page makes, by origin.
    const origins = new Set<string>();
    page.on('request', (request) => {
      const address = request.url();
      if (/^https?:/.test(address)) origins.add(new URL(address).origin);
    });
    const policies: string[] = [];
    page.on('response', (response) => {
      const policy = response.headers()['content-security-policy'];
      if (response.request().resourceType() === 'document' && policy) policies.push(policy);
    });

    // A fresh load of the page (the token stays in the tab), so its document's policy is seen.
    await page.goto('about:blank');
    await page.goto(`${url}/#/jobs/${job.id}`);
    const open = page.getByRole('link', { name: 'Open the report full page' });
    await open.waitFor({ timeout: 90_000 });
    await open.click();
    const heading = page.getByRole('heading', { level: 1, name: /^Report: / });
    await heading.waitFor();
    expect(page.url()).toContain(`#/jobs/${job.id}/report`);
    expect(await heading.textContent()).toContain('Folding helmet');

    // The report itself, in a frame that runs no script, the whole width and most of the height.
    const frame = page.locator('main.full iframe.report');
    expect(await frame.getAttribute('sandbox')).toBe('');
    const report = page.frameLocator('main.full iframe.report');
    await report.getByRole('heading', { name: /Conclusion/ }).waitFor();
    expect(await report.locator('body').textContent()).toContain('Folding helmet');
    const box = (await frame.boundingBox())!;
    expect(box.width).toBeGreaterThan(1200);
    expect(box.height).toBeGreaterThan(600);
    // Its files below it.
    await page.getByRole('heading', { name: 'Downloads' }).waitFor();
    expect(await page.getByRole('button', { name: 'Download report.html' }).count()).toBe(1);
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '60-report-full-page');

    // The policy: the page's document carries it, and no request left this server's origin.
    expect(policies.at(-1)).toMatch(/default-src 'none'/);
    expect(policies.at(-1)).toMatch(/img-src 'self' data:/);
    expect([...origins]).toEqual([new URL(url).origin]);
    // An image from another origin, put in the page and in the report's frame, is refused by the
    // policy (the frame of srcdoc inherits it) and never requested; a script in the frame never runs.
    // (Browser code as strings: this project's tests compile without the DOM's types.)
    const refused = await page.evaluate(`new Promise((done) => {
      document.addEventListener('securitypolicyviolation', (event) => done(event.violatedDirective), { once: true });
      const image = document.createElement('img');
      image.src = '${outsideUrl}/from-the-page.png';
      image.alt = '';
      document.body.append(image);
    })`);
    expect(refused).toMatch(/^img-src/);
    const inFrame = page.frames().find((candidate) => candidate !== page.mainFrame())!;
    // No script of the frame's own runs (event listeners neither), so it is asked from here until
    // the image is settled: a refused image is complete, with no size, and its request never left.
    await inFrame.evaluate(`{
      const script = document.createElement('script');
      script.textContent = "document.title = 'script ran'";
      document.body.append(script);
      const image = document.createElement('img');
      image.id = 'probe';
      image.src = '${outsideUrl}/from-the-report.png';
      image.alt = '';
      document.body.append(image);
    }`);
    await expect
      .poll(() => inFrame.evaluate("document.getElementById('probe').complete"), { timeout: 10_000 })
      .toBe(true);
    expect(await inFrame.evaluate("document.getElementById('probe').naturalWidth")).toBe(0);
    expect(reachedOutside).toEqual([]);
    expect(await inFrame.evaluate('document.title')).not.toBe('script ran');

    // Keyboard: the focus is on the page's heading; the back link is the stop before it, and Enter
    // follows it to the job.
    expect(await page.evaluate('document.activeElement?.tagName')).toBe('H1');
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('← The job');
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Open the report full page' }).waitFor();
    expect(page.url()).toMatch(new RegExp(`#/jobs/${job.id}$`));
  }, 150_000);
});
