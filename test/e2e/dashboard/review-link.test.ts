// The reviewer's side in a real browser: `opflow serve` with a reviewers rule posts a notice to a
// real local HTTP receiver (a Slack channel); its signed link opens the confirmation page, which shows
// the options and answers nothing until its form is sent; the answer is confirmed, and the job's
// dashboard page shows who answered, when and how, beside an answer given in the dashboard itself,
// and its approval rounds: with two approvers, the notice, the first approver (by link), the call
// for the second approval and the second approver (by the job API), in order, with dates.
// A changed, an expired and an answered link each get a page that says why. Each page is axe clean;
// screenshots go to test-artifacts/dashboard/.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobView } from '../../../shared/http/answer-schemas';
import { signReviewLink } from '../../../shared/reviewers/review-link';
import { type HookReceiver, startHookReceiver } from '../../support/reviewer-receivers';
import { killRunningOpflows } from '../local/opflow-process';
import { accessibilityProblems, artefacts, jobApiClient, screenshot, servedDashboard } from './browser';

const token = 'dashboard-review-test-token-0123456789';
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const linkSecret = 'review-link-secret-of-the-dashboard-test-0123';
const disclosure =
  'A folding bicycle helmet made of hinged shell segments that lock into a rigid dome with a magnetic latch.';

describe('the reviewer confirmation page and the answers on the job page', () => {
  let dir: string;
  let url: string;
  let browser: Browser;
  let page: Page;
  let receiver: HookReceiver;
  const api = jobApiClient(() => url, token);
  const jobOf = async (id: string) => (await api<{ job: JobView }>('GET', `/jobs/${id}`)).job;
  const until = async <T>(what: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = await what();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error('gave up waiting');
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  };
  const waitFor = (id: string, status: string) =>
    until(async () => {
      const job = await jobOf(id);
      return job.status === status ? job : undefined;
    });
  const create = async (label: string, tenant?: string) =>
    (
      await api<{ job: JobView }>('POST', '/jobs', {
        workflow: 'novelty-check',
        input: { text: disclosure },
        label,
        ...(tenant ? { tenant } : {}),
        selection: { mode: 'manual' },
      })
    ).job;
  /** The bodies of the Slack notices about `jobId`, in order. */
  const slackPosts = (jobId: string) =>
    receiver.taken.map((post) => post.body).filter((body) => body.includes(jobId));
  /** The link of the Slack notice about `jobId`. */
  const slackLink = (jobId: string) =>
    until(() => {
      const post = slackPosts(jobId)[0];
      return post ? (JSON.parse(post).blocks.at(-1).elements[0].url as string) : undefined;
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-dashboard-review-'));
    receiver = await startHookReceiver();
    writeFileSync(
      join(dir, 'opflow.config.json'),
      JSON.stringify({
        reviewers: {
          checkEverySeconds: 1,
          channels: { 'ip-team': { type: 'slack' } },
          rules: [
            {
              name: 'legal-pair',
              match: { tenant: 'legal' },
              notify: ['ip-team'],
              approvers: 2,
              timeout: { after: '4h', answer: 'preselected' },
            },
            { name: 'novelty', notify: ['ip-team'], remind: { every: '1h', times: 2 } },
          ],
        },
      }),
    );
    ({ url, browser, page } = await servedDashboard(dir, token, {
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_REVIEW_LINK_SECRET: linkSecret,
      OPFLOW_REVIEW_IP_TEAM_URL: `http://${receiver.host}/services/T000/B000/slack-url-secret`,
      OPFLOW_CALLBACK_ALLOW_HOSTS: receiver.host,
    }));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens a signed link, shows the options without answering, answers by its form, and confirms', async () => {
    const job = await create('helmet to review');
    const parked = await waitFor(job.id, 'AWAITING_INPUT');
    const options = parked.pending!.options;
    const link = await slackLink(job.id);

    // Opening the page answers nothing: it shows the question, the options and the form.
    const opened = await page.goto(link);
    expect(opened?.status()).toBe(200);
    await page.getByRole('heading', { name: parked.pending!.prompt }).waitFor();
    await page.getByRole('group', { name: parked.pending!.prompt }).waitFor();
    expect(await page.locator('input[name="option"]').count()).toBe(options.length);
    for (const option of options) await page.getByLabel(option.label, { exact: false }).first().waitFor();
    expect((await jobOf(job.id)).status).toBe('AWAITING_INPUT');
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '40-review-page');

    // Another option than the suggested one (one, or two where the question takes several), and the
    // name a channel's link asks for.
    const chosen = parked.pending!.max === 1 ? [options.at(-1)!] : options.slice(0, 2);
    if (parked.pending!.max > 1)
      for (const input of await page.locator('input[name="option"]').all()) await input.setChecked(false);
    for (const option of chosen) await page.locator(`input[name="option"][value="${option.id}"]`).check();
    await page.getByLabel(/Your name or mail address/).fill('Dana Reviewer');
    await page.getByRole('button', { name: 'Confirm this answer' }).click();
    await page.getByRole('heading', { name: 'Thank you: your answer is recorded' }).waitFor();
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '41-review-confirmed');
    const done = await until(async () => {
      const now = await jobOf(job.id);
      return now.status !== 'AWAITING_INPUT' ? now : undefined;
    });
    expect(done.answers).toEqual([
      expect.objectContaining({
        via: 'link',
        by: 'Dana Reviewer',
        options: chosen.map((o) => o.id),
        labels: chosen.map((o) => o.label),
      }),
    ]);

    // The link of an answered question says who answered.
    const again = await page.goto(link);
    expect(again?.status()).toBe(409);
    await page.getByRole('heading', { name: 'This question is closed' }).waitFor();
    expect(await page.locator('main').textContent()).toContain('by Dana Reviewer via link');

    // The job's page in the dashboard: the answer, who gave it, how and when, and the notice sent.
    await page.goto(`${url}/#/jobs/${job.id}`);
    const answers = page.getByRole('table', { name: /answer to its selection points/ });
    await answers.waitFor();
    const row = answers.locator('tbody tr');
    expect(await row.getAttribute('data-via')).toBe('link');
    const cells = await row.getByRole('cell').allTextContents();
    // Each option as the reviewer saw it, its id beside it for auditors.
    const chosenText = chosen.map((o) => `${o.label} (${o.id})`).join(', ');
    expect(cells.slice(1, 4)).toEqual([chosenText, 'Dana Reviewer', 'review link']);
    expect(cells[4]).toMatch(/^today \d/);
    // Its round: the notice to the channel, then the one approver's answer, each with its date.
    const rounds = page.getByRole('table', { name: /^Rounds at .*: who answered and who was told/ });
    const lines = await rounds
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => cell.textContent ?? '')));
    expect(lines.map((cells) => cells.slice(1))).toEqual([
      ['', 'first notice', 'ip-team', 'sent (1 attempt)'],
      ['round 1', `approver chose: ${chosenText}`, 'Dana Reviewer', 'review link'],
    ]);
    for (const cells of lines) expect(cells[0]).toMatch(/^today \d/);
    expect(await page.getByRole('heading', { name: 'Approval rounds' }).isVisible()).toBe(true);
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '42-job-answers');
    // The answers and notices as the window shows them, for the guide.
    await page.evaluate("document.getElementById('answers-heading').scrollIntoView({ block: 'start' })");
    await page.screenshot({ path: join(artefacts, '42-job-answers-window.png') });
  }, 120_000);

  it('shows the rounds of a job two people confirmed: the notice, the first approver by link, the call for the second, the second by the API', async () => {
    const job = await create('helmet for two approvers', 'legal');
    const parked = await waitFor(job.id, 'AWAITING_INPUT');
    const preselected = parked.pending!.options.filter((o) => o.preselected);
    const chosen = preselected.map((o) => o.id);
    const chosenText = preselected.map((o) => `${o.label} (${o.id})`).join(', ');
    await page.goto(await slackLink(job.id));
    // The timeout's default, each option by its label with its id beside it.
    expect(await page.locator('main').textContent()).toMatch(
      new RegExp(`the default is taken: ${escapeRegExp(chosenText)}\\.`),
    );
    await page.getByLabel(/Your name or mail address/).fill('Dana Reviewer');
    await page.getByRole('button', { name: 'Confirm this answer' }).click();
    await page.getByRole('heading', { name: 'Your confirmation is recorded' }).waitFor();
    expect(await page.locator('main').textContent()).toContain(`You chose ${chosenText}.`);
    // serve calls the second approver at once: a second notice about the job.
    await until(() => (slackPosts(job.id).length >= 2 ? true : undefined));
    // The job's page while it waits: the default the timeout takes, by label.
    await page.goto(`${url}/#/jobs/${job.id}`);
    await page
      .getByRole('table', { name: /^Rounds at .*: who answered and who was told/ })
      .getByText(`Without an answer, the default (${chosenText}) is taken`)
      .waitFor();
    await page.goto('about:blank'); // the page below is loaded afresh
    await api('POST', `/jobs/${job.id}/selection`, { selected: chosen, by: 'Erin Second' });
    await until(async () => ((await jobOf(job.id)).status !== 'AWAITING_INPUT' ? true : undefined));

    await page.goto(`${url}/#/jobs/${job.id}`);
    const rounds = page.getByRole('table', { name: /^Rounds at .*: who answered and who was told/ });
    await rounds.waitFor();
    const lines = await rounds
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => cell.textContent ?? '')));
    expect(lines.map((cells) => cells.slice(1))).toEqual([
      ['', 'first notice', 'ip-team', 'sent (1 attempt)'],
      ['round 1', `first approver chose: ${chosenText}`, 'Dana Reviewer', 'review link'],
      ['', 'call for the second approval', 'ip-team', 'sent (1 attempt)'],
      ['round 2', `second approver chose: ${chosenText}`, 'Erin Second', 'job API'],
    ]);
    // Dates a person reads, no internal ids.
    for (const cells of lines) expect(cells[0]).toMatch(/^today \d/);
    const section = await page.locator('section[aria-labelledby="review-heading"]').textContent();
    expect(section).toContain(
      "Reviewers' rule legal-pair; 2 different people must confirm the same options.",
    );
    expect(section).not.toMatch(/01[0-9A-HJKMNP-TV-Z]{24}|\d{4}-\d\d-\d\dT/);
    expect(await accessibilityProblems(page)).toBe('');
    await page.evaluate("document.getElementById('review-heading').scrollIntoView({ block: 'start' })");
    await page.screenshot({ path: join(artefacts, '45-job-approval-rounds-window.png') });
  }, 120_000);

  it('shows who answered in the dashboard, by the name given there', async () => {
    const job = await create('helmet answered in the page');
    const parked = await waitFor(job.id, 'AWAITING_INPUT');
    await page.goto(`${url}/#/jobs/${job.id}`);
    await page.getByRole('heading', { name: 'Waiting for your selection' }).waitFor();
    await page.getByLabel('Your name').fill('Erin Operator');
    await page.getByRole('button', { name: 'Submit selection' }).click();
    const answers = page.getByRole('table', { name: /answer to its selection points/ });
    await answers.waitFor();
    const cells = await answers.locator('tbody tr').getByRole('cell').allTextContents();
    expect(cells.slice(2, 4)).toEqual(['Erin Operator', 'dashboard']);
    const recorded = await jobOf(job.id);
    expect(recorded.answers?.[0]).toMatchObject({ via: 'dashboard', by: 'Erin Operator' });
    expect(recorded.answers?.[0]?.options).toEqual(
      parked.pending!.options.filter((o) => o.preselected).map((o) => o.id),
    );
  }, 90_000);

  it('a changed link and an expired link each get a page that says why, and answer nothing', async () => {
    const job = await create('helmet with bad links');
    const parked = await waitFor(job.id, 'AWAITING_INPUT');
    const link = await slackLink(job.id);
    const tampered = link.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const refused = await page.goto(tampered);
    expect(refused?.status()).toBe(403);
    await page.getByRole('heading', { name: 'This link cannot be used' }).waitFor();
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '43-review-tampered');

    const expiredToken = signReviewLink(
      {
        jobId: job.id,
        step: parked.pending!.step,
        offeredAt: Date.parse(parked.pending!.offeredAt),
        recipient: 'alice@example.com',
        expiresAt: Date.now() - 60_000,
      },
      Buffer.from(linkSecret),
    );
    const expired = await page.goto(`${url}/review/${expiredToken}`);
    expect(expired?.status()).toBe(410);
    await page.getByRole('heading', { name: 'This link has expired' }).waitFor();
    expect(await page.locator('main').textContent()).toContain('This link expired on');
    expect(await accessibilityProblems(page)).toBe('');
    await screenshot(page, '44-review-expired');
    expect((await jobOf(job.id)).status).toBe('AWAITING_INPUT');
  }, 90_000);
});
