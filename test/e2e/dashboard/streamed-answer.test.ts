// A streamed answer on the job page, growing before the job is done: real chromium, the real
// `opflow serve` against a sandbox on loopback that streams a frame every 150 ms (an answer takes
// it several seconds). The page follows GET /events (answer events), shows the text as it arrives
// in a region that is not re-announced, then the final answer as the job keeps it; axe clean. And
// a change committed between the page's read of its job and its feed's start still shows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_API_KEY, type Sandbox, startSandbox } from '../../../shared/sandbox';
import { killRunningOpflows } from '../local/opflow-process';
import { childEnv, startServe } from '../local/serve-process';
import { accessibilityProblems, jobApiClient, openBrowser, screenshot } from './browser';

const token = 'streamed-answer-test-token-0123456789';

describe('a streamed answer on the job page, live', () => {
  let dir: string;
  let url: string;
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-streamed-'));
    // Answers stream slowly (a frame every 150 ms); tasks take half a second.
    sandbox = await startSandbox({
      streamChunkDelayMs: 150,
      defaultTaskDuration: { meanMs: 500, spreadMs: 0 },
    });
    ({ url } = await startServe([], {
      cwd: dir,
      env: childEnv({
        OPFLOW_DB: join(dir, 'state', 'jobs.db'),
        OPFLOW_OUT: join(dir, 'reports'),
        OPFLOW_SERVE_TOKEN: token,
        OPFLOW_BASE_URL: sandbox.url,
        OPFLOW_API_KEY: SANDBOX_API_KEY,
      }),
    }));
    ({ browser, page } = await openBrowser());
    await page.goto(`${url}/`);
    await page.getByLabel('Server token').fill(token);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Jobs' }).waitFor();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the answer growing while the job runs, then the final answer', async () => {
    const api = jobApiClient(() => url, token);
    // The page opens while the answer streams: it is sent the text so far, then each new part.
    const { job } = await api<{ job: { id: string } }>('POST', '/jobs', {
      workflow: 'llm-chat',
      input: { text: 'What limits the cycle life of solid-state battery separators?', model: 'ai50' },
    });
    await page.goto(`${url}/#/jobs/${job.id}`);
    await page.locator('[data-live="live"]').waitFor();
    // Records each length the answer takes, and whether the job had finished by then.
    await page.evaluate(`{
      const seen = [];
      window.answerSeen = seen;
      const note = () => {
        const text = document.querySelector('.answer-text');
        const state = document.querySelector('[data-answer-state]')?.getAttribute('data-answer-state');
        if (!text) return;
        const length = Number(text.getAttribute('data-length'));
        if (seen.at(-1)?.length !== length || seen.at(-1)?.state !== state) seen.push({ length, state });
      };
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      note();
    }`);
    await page.locator('[data-answer-state="streaming"]').waitFor({ timeout: 30_000 });
    // (Polled from here: the page's Content-Security-Policy allows no evaluated strings of its own.)
    for (let waited = 0; ; waited += 100) {
      const seen = (await page.evaluate('window.answerSeen')) as { state: string }[];
      if (seen.filter((entry) => entry.state === 'streaming').length >= 3) break;
      if (waited > 30_000) throw new Error(`the answer did not grow: ${JSON.stringify(seen)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await screenshot(page, 'streamed-01-answer-growing');
    expect(await page.locator('.status-SUCCEEDED').count()).toBe(0);
    // The job is running from its one call's start, not queued while its answer arrives.
    await page.locator('.status-RUNNING').first().waitFor({ timeout: 5_000 });
    expect(await page.locator('.status-QUEUED').count()).toBe(0);
    // Its call is counted when it ends; meanwhile the Calls tile says one is under way.
    const underWay = page.getByText('1 under way · 0 failed, 0 throttled');
    expect(await underWay.count()).toBe(1);
    const { job: midway } = await api<{ job: { callSince?: string } }>('GET', `/jobs/${job.id}`);
    expect(Date.parse(midway.callSince ?? '')).toBeGreaterThan(Date.now() - 60_000);
    expect(await accessibilityProblems(page)).toBe('');

    await page.locator('[data-answer-state="final"]').waitFor({ timeout: 60_000 });
    const seen = (await page.evaluate('window.answerSeen')) as { length: number; state: string }[];
    const streaming = seen.filter((entry) => entry.state === 'streaming').map((entry) => entry.length);
    // It grew in this one page, several times, never backwards, before the job was done.
    expect(streaming.length).toBeGreaterThanOrEqual(3);
    expect(streaming).toEqual([...streaming].sort((a, b) => a - b));
    expect(streaming[0]).toBeGreaterThan(0);
    const final = await page.locator('.answer-text').textContent();
    const { job: done } = await api<{ job: { status: string; callSince?: string } }>(
      'GET',
      `/jobs/${job.id}`,
    );
    expect(done.status).toBe('SUCCEEDED');
    expect(done.callSince).toBeUndefined();
    await page.locator('.status-SUCCEEDED').first().waitFor({ timeout: 10_000 });
    expect(await underWay.count()).toBe(0);
    const { files } = await api<{ files: { name: string; url: string }[] }>('GET', `/jobs/${job.id}/report`);
    const result = await api<{ steps: Record<string, { text: string }> }>(
      'GET',
      files.find((file) => file.name === 'result.json')!.url,
    );
    const output = result.steps['answer-ai50']!;
    expect(final).toBe(output.text);
    expect(final!.length).toBeGreaterThan(streaming[0]!);
    // Screen readers: the live region holds sentences added one by one, not the whole text again.
    const region = page.locator('[aria-live="polite"][aria-relevant="additions"]');
    expect(await region.locator('span').count()).toBeGreaterThan(1);
    expect(await region.textContent()).toContain('Answer complete.');
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, 'streamed-02-answer-final');
  }, 120_000);
  it('shows a change made after the page read its job and before its feed opened', async () => {
    const api = jobApiClient(() => url, token);
    const { job } = await api<{ job: { id: string } }>('POST', '/jobs', {
      workflow: 'novelty-check',
      input: {
        text: '# Folding helmet\nSix rigid shell segments joined by textile hinges fold flat to the size of a book.',
      },
      selection: { mode: 'manual' },
    });
    for (let waited = 0; ; waited += 200) {
      const { job: now } = await api<{ job: { status: string } }>('GET', `/jobs/${job.id}`);
      if (now.status === 'AWAITING_INPUT') break;
      if (waited > 60_000) throw new Error(`the job did not come to its selection: ${now.status}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // The feed's start is held; the page reads the job (and polls it while its feed is not live).
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/events/token', async (route) => {
      await held;
      await route.continue();
    });
    try {
      const read = page.waitForResponse((response) => response.url().endsWith(`/jobs/${job.id}`));
      await page.goto(`${url}/#/jobs/${job.id}`);
      await read;
      await page.locator('.status-AWAITING_INPUT').first().waitFor();
      // Just after one of its reads, the job changes and the feed opens (from then on): once live the
      // page polls every 30 s, so it shows the change only if it reads again when the feed opens.
      await page.waitForResponse((response) => response.url().endsWith(`/jobs/${job.id}`));
      const cancelled = await api<{ job?: { status: string } }>('POST', `/jobs/${job.id}/cancel`, {});
      expect(cancelled.job?.status).toBe('CANCELLED');
      release();
      await page.locator('[data-live="live"]').waitFor();
      await page.locator('.status-CANCELLED').first().waitFor({ timeout: 5_000 });
    } finally {
      release();
      await page.unroute('**/events/token');
    }
  }, 90_000);
});
