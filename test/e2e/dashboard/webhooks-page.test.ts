// The webhook deliveries page in a real browser (Debian's chromium through playwright-core) against
// the real `opflow serve` on the built-in sandbox: deliveries signed with the Standard Webhooks
// headers, accepted (a job started, a repeat of the same job) and refused (a signature of another
// secret, a stale timestamp, a body that is not JSON, an unknown workflow), each listed newest first
// with its answer and, for a refusal, its reason; a delivery that comes while the page is open shows
// without a reload; the source filter; a job's link. The page is axe clean; screenshots go to
// test-artifacts/dashboard/ (the docs' image is taken by `npm run screenshots`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows } from '../local/opflow-process';
import { accessibilityProblems, screenshot, servedDashboard } from './browser';

const token = 'dashboard-webhooks-page-token-0123456789';
const secretOf = (name: string) => `whsec_${Buffer.from(`the signing secret of ${name}`).toString('base64')}`;

describe('the webhook deliveries page', () => {
  let dir: string;
  let url: string;
  let browser: Browser;
  let page: Page;

  /** A delivery to `source`, signed with `secret` at `at`: its status and answer. */
  const deliver = async (
    source: string,
    id: string,
    body: string,
    options: { secret?: string; at?: Date } = {},
  ) => {
    const at = options.at ?? new Date();
    const answer = await fetch(`${url}/webhooks/${source}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(options.secret ?? secretOf(source)).sign(id, at, body),
      },
      body,
    });
    return { status: answer.status, body: (await answer.json()) as { jobId?: string } };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-dashboard-webhooks-'));
    ({ url, browser, page } = await servedDashboard(dir, token, {
      OPFLOW_WEBHOOK_SECRET_TRACKER: secretOf('tracker'),
      OPFLOW_WEBHOOK_SECRET_DOCKET: secretOf('docket'),
    }));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists each delivery with its answer and what came of it, refusals with their reason, live', async () => {
    const request = JSON.stringify({ workflow: 'patent-count', input: { query: 'TTL:(folding helmet)' } });
    const started = await deliver('tracker', 'msg_started', request);
    expect(started.status).toBe(202);
    expect((await deliver('tracker', 'msg_started', request)).body.jobId).toBe(started.body.jobId);
    expect(
      (await deliver('tracker', 'msg_forged', request, { secret: secretOf('somebody else') })).status,
    ).toBe(401);
    expect(
      (await deliver('tracker', 'msg_stale', request, { at: new Date(Date.now() - 3_600_000) })).status,
    ).toBe(401);
    expect((await deliver('docket', 'msg_not_json', 'workflow=patent-count')).status).toBe(400);
    const unknown = JSON.stringify({ workflow: 'patent-counter', input: { query: 'TTL:(x)' } });
    expect((await deliver('docket', 'msg_unknown_workflow', unknown)).status).toBe(400);

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhook deliveries' }).waitFor();
    const rows = page.locator('tbody tr[data-delivery]');
    await page.locator('tr[data-delivery]', { hasText: 'msg_unknown_workflow' }).waitFor();
    expect(await rows.count()).toBe(6);
    const texts = await rows.allTextContents();
    // Newest first, each with the status answered and what came of it.
    const expected: [string, string, RegExp][] = [
      ['msg_unknown_workflow', 'HTTP 400', /patent-counter/],
      ['msg_not_json', 'HTTP 400', /invalid-json: the body is not JSON/],
      ['msg_stale', 'HTTP 401', /unauthorized: .*timestamp/i],
      ['msg_forged', 'HTTP 401', /unauthorized: no v1 signature in webhook-signature matches/],
      ['msg_started', 'HTTP 202', /repeated delivery: the same job/],
      ['msg_started', 'HTTP 202', /job started/],
    ];
    expected.forEach(([id, answer, outcome], index) => {
      expect(texts[index]).toContain(id);
      expect(texts[index]).toContain(answer);
      expect(texts[index]).toMatch(outcome);
    });
    expect(texts[0]).toContain('docket');
    expect(texts[5]).toContain('tracker');
    expect(texts[5]).toContain(started.body.jobId);
    // Refusals are coloured as such, acceptances as such.
    expect(await page.locator('tr[data-answer="401"] .status-FAILED').count()).toBe(2);
    expect(await page.locator('tr[data-answer="202"] .status-SUCCEEDED').count()).toBe(2);
    // Sources known only by their signing secret (no config file here) are listed too: open, their
    // payload a job request, their last delivery.
    const sources = page.getByRole('table', { name: /^2 sources \(2 known only by their signing secret\)/ });
    await sources.locator('tr[data-source="tracker"]').waitFor();
    for (const [name, last] of [
      ['docket', 'HTTP 400'],
      ['tracker', 'HTTP 401'],
    ]) {
      const row = sources.locator(`tr[data-source="${name}"]`);
      expect(await row.getAttribute('data-origin')).toBe('secret');
      expect(await row.getAttribute('data-state')).toBe('open');
      expect(await row.textContent()).toMatch(
        new RegExp(`${name}signing secret onlyfrom the payloaddefaultOpen.*${last}`),
      );
    }
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '70-webhooks');

    // A delivery while the page is open shows at the top without a reload.
    const later = await deliver('docket', 'msg_while_open', request);
    expect(later.status).toBe(202);
    await rows.first().filter({ hasText: 'msg_while_open' }).waitFor({ timeout: 20_000 });
    expect(await rows.count()).toBe(7);

    // The source filter, by keyboard: only docket's deliveries; cleared, all of them again.
    await page.getByRole('textbox', { name: 'Source' }).fill('docket');
    await page.getByRole('textbox', { name: 'Source' }).press('Enter');
    await page.waitForURL(/#\/webhooks\?source=docket/);
    await expect.poll(() => rows.count()).toBe(3);
    expect((await rows.allTextContents()).every((text) => text.includes('docket'))).toBe(true);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => rows.count()).toBe(7);

    // The started job's link leads to its page.
    await rows.last().getByRole('link').click();
    await page.waitForURL(new RegExp(`#/jobs/${started.body.jobId}$`));
    await page.getByRole('heading', { level: 1 }).first().waitFor();
  }, 120_000);
});
