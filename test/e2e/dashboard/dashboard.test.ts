// The dashboard in a real browser (Debian's chromium through playwright-core) against the real
// `opflow serve` on the built-in sandbox, with a server token: a bad token refused, the jobs list
// updating as jobs run, filters and search, a selection answered in the page (one job, then many
// at once), a report read, a cancel and a retry, batches, schedules triggered, paused and resumed,
// and the webhook deliveries received. Screenshots go to test-artifacts/dashboard/.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningOpflows, runOpflow } from '../local/opflow-process';
import { childEnv, startServe } from '../local/serve-process';
import { accessibilityProblems, artefacts, jobApiClient, openBrowser, screenshot } from './browser';

const token = 'dashboard-test-token-0123456789';
/** The signing secret of the webhook source "tracker" (OPFLOW_WEBHOOK_SECRET_TRACKER). */
const trackerSecret = `whsec_${Buffer.from('the signing secret of the tracker source').toString('base64')}`;

const disclosure = (title: string) => `# ${title}
A bicycle helmet made of six rigid shell segments joined by textile hinges, so that it folds flat to the
size of a book. A magnetic buckle locks the segments in the open shape.`;

interface JobView {
  id: string;
  status: string;
  runs?: unknown[];
}

describe('the dashboard in a browser', () => {
  let dir: string;
  let url: string;
  let env: NodeJS.ProcessEnv;
  let browser: Browser;
  let page: Page;
  /** A callback receiver that answers 503 to the first delivery of each job, then 200. */
  let receiver: Server;
  let receiverUrl: string;
  const received: { jobId: string; status: number }[] = [];

  const call = jobApiClient(() => url, token);
  const api = (method: string, path: string, body?: unknown) => call<{ job: JobView }>(method, path, body);
  const submit = async (body: Record<string, unknown>) => (await api('POST', '/jobs', body)).job;
  const shot = (name: string) => screenshot(page, name);
  /** The row of a job in the list, once it shows `status` (the page updates itself; no reload). */
  const row = (id: string, status?: string) =>
    page.locator(`tr[data-job="${id}"]${status ? `[data-status="${status}"]` : ''}`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-dashboard-'));
    // Schedules far from firing on their own: the dashboard triggers, pauses and resumes the
    // first; the file itself pauses the second.
    writeFileSync(
      join(dir, 'opflow.config.json'),
      JSON.stringify({
        schedules: [
          {
            name: 'weekly-count',
            cron: '0 6 1 1 *',
            workflow: 'patent-count',
            input: { query: 'TTL:(helmet)' },
            catchUp: 'none',
          },
          {
            name: 'frozen-count',
            cron: '0 7 1 1 *',
            workflow: 'patent-count',
            input: { query: 'TTL:(frozen)' },
            catchUp: 'none',
            paused: { reason: 'held in the file until the budget is agreed' },
          },
        ],
      }),
    );
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      req.on('end', () => {
        const jobId = (JSON.parse(body) as { data?: { jobId?: string }; jobId?: string }).data?.jobId ?? '?';
        const status = received.some((delivery) => delivery.jobId === jobId) ? 200 : 503;
        received.push({ jobId, status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverHost = `127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    receiverUrl = `http://${receiverHost}/opflow/done`;
    env = childEnv({
      OPFLOW_CALLBACK_ALLOW_HOSTS: receiverHost,
      OPFLOW_SANDBOX_SPEED: '100',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
      OPFLOW_SERVE_TOKEN: token,
      OPFLOW_WEBHOOK_SECRET_TRACKER: trackerSecret,
    });
    ({ url } = await startServe([], { cwd: dir, env }));
    ({ browser, page } = await openBrowser());
  });
  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks for the token, refuses a wrong one, and shows the jobs with the right one', async () => {
    await page.goto(`${url}/`);
    await page.getByRole('heading', { name: 'Sign in to this opflow server' }).waitFor();
    await page.getByLabel('Server token').fill('not-the-right-token-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const refused = page.getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent()).toContain('The token was refused');
    await shot('01-token-refused');

    await page.getByLabel('Server token').fill(token);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Jobs' }).waitFor();
    expect(await page.getByRole('table').textContent()).toContain('No jobs match');
  }, 60_000);

  it('updates the list as jobs run, and filters and searches it', async () => {
    const count = await submit({ workflow: 'patent-count', input: { query: 'TTL:(folding helmet)' } });
    const novelty = await submit({
      workflow: 'novelty-check',
      input: { text: disclosure('Folding helmet') },
      label: 'helmet.md',
    });
    // They appear without a reload, then reach SUCCEEDED while the page is open.
    await row(count.id).waitFor();
    await row(novelty.id).waitFor();
    await row(count.id, 'SUCCEEDED').waitFor();
    await row(novelty.id, 'SUCCEEDED').waitFor();
    await shot('02-list-updated');
    expect(await accessibilityProblems(page)).toBe('');

    await page.getByLabel('Workflow').selectOption('patent-count');
    await row(novelty.id).waitFor({ state: 'detached' });
    await row(count.id).waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await row(novelty.id).waitFor();

    // Search reads the input text: "buckle" is only in the disclosure.
    await page.getByLabel('Search title and input text').fill('magnetic buckle');
    await page.getByLabel('Search title and input text').press('Enter');
    await row(count.id).waitFor({ state: 'detached' });
    await row(novelty.id).waitFor();
    await shot('03-search');
    await page.getByRole('button', { name: 'Clear' }).click();
    await row(count.id).waitFor();
  }, 90_000);

  it('answers a selection in the page and shows the report', async () => {
    const job = await submit({
      workflow: 'novelty-check',
      input: { text: disclosure('Helmet with a selection') },
      selection: { mode: 'manual' },
    });
    await row(job.id, 'AWAITING_INPUT').waitFor();
    await page.getByRole('link', { name: 'Helmet with a selection' }).first().click();
    await page.getByRole('heading', { name: 'Waiting for your selection' }).waitFor();
    const options = page.getByRole('group').getByRole('checkbox');
    expect(await options.count()).toBeGreaterThanOrEqual(2);
    // By keyboard: focus an option and toggle it with Space.
    const first = options.first();
    const wasChecked = await first.isChecked();
    await first.focus();
    await page.keyboard.press('Space');
    expect(await first.isChecked()).toBe(!wasChecked);
    if (!(await first.isChecked())) await page.keyboard.press('Space');
    await shot('04-selection');
    expect(await accessibilityProblems(page)).toBe('');
    await page.getByRole('button', { name: 'Submit selection' }).click();
    await page.getByRole('heading', { name: 'Report' }).waitFor({ timeout: 60_000 });
    const report = page.frameLocator('iframe.report');
    await report.locator('h1').first().waitFor();
    await page.locator('iframe.report').screenshot({ path: join(artefacts, '05-report-frame.png') });
    expect((await report.locator('body').textContent())?.length).toBeGreaterThan(100);
    expect(await page.getByRole('button', { name: /^Download / }).count()).toBeGreaterThanOrEqual(3);
    await page.getByRole('list', { name: 'Steps' }).waitFor();
    expect(await page.getByRole('list', { name: 'Steps' }).textContent()).toMatch(/call/);
    await shot('05-report');
    expect(await accessibilityProblems(page)).toBe('');
  }, 90_000);

  it('answers many waiting jobs at once from the list', async () => {
    const jobs = await Promise.all(
      ['Batch helmet A', 'Batch helmet B'].map((title) =>
        submit({
          workflow: 'novelty-check',
          input: { text: disclosure(title) },
          selection: { mode: 'manual' },
        }),
      ),
    );
    await page.goto(`${url}/#/`);
    for (const job of jobs) await row(job.id, 'AWAITING_INPUT').waitFor();
    for (const job of jobs) await row(job.id).getByRole('checkbox').check();
    await page.getByRole('heading', { name: /Answer 2 waiting jobs at once/ }).waitFor();
    await shot('06-bulk-answer');
    await page.getByRole('button', { name: 'Submit to 2 jobs' }).click();
    await page.getByText('2 jobs answered').waitFor();
    for (const job of jobs) await row(job.id, 'SUCCEEDED').waitFor();
  }, 90_000);

  it('cancels a job from its page', async () => {
    const job = await submit({
      workflow: 'novelty-check',
      input: { text: disclosure('Helmet to cancel') },
      selection: { mode: 'manual' },
      callbackUrl: 'https://receiver.example.com/opflow/hook?token=secret-in-query',
    });
    // Waiting for its selection, the job has no event to re-render the page: "running for" must
    // still move on its own.
    await expect
      .poll(async () => (await api('GET', `/jobs/${job.id}`)).job.status, { timeout: 30_000 })
      .toBe('AWAITING_INPUT');
    await page.goto(`${url}/#/jobs/${job.id}`);
    const runningFor = page.getByText(/running for/);
    const shown = await runningFor.textContent();
    await expect.poll(() => runningFor.textContent(), { timeout: 5_000 }).not.toBe(shown);
    await page.getByRole('button', { name: 'Cancel job' }).click();
    await page.getByText('Job cancelled.').waitFor();
    expect((await api('GET', `/jobs/${job.id}`)).job.status).toBe('CANCELLED');
    await page
      .getByRole('button', { name: /^Retry from/ })
      .first()
      .waitFor();
    await shot('07-cancelled');
  }, 60_000);

  it("shows a job's callback attempts as they are made, a refused one and the one delivered", async () => {
    const job = await submit({
      workflow: 'patent-count',
      input: { query: 'TTL:(callback helmet)' },
      callbackUrl: receiverUrl,
    });
    await page.goto(`${url}/#/jobs/${job.id}`);
    const callback = page.getByRole('region', { name: 'Callback' });
    // The first attempt is answered 503; the sender tries again 5 s later and gets 200.
    await callback.getByRole('table', { name: '2 attempts' }).waitFor({ timeout: 60_000 });
    await callback.getByText('delivered (round 1)').waitFor();
    const attempts = await callback.locator('tbody tr').allTextContents();
    expect(attempts[0]).toContain('HTTP 503');
    expect(attempts[1]).toContain('HTTP 200');
    expect(received.filter((delivery) => delivery.jobId === job.id).map((d) => d.status)).toEqual([503, 200]);
    expect(await accessibilityProblems(page)).toBe('');
    await callback.screenshot({ path: join(artefacts, '18-callback-attempts.png') });
  }, 90_000);

  it('shows a batch going on under serve, its bad lines, a redrive of its failed item, and cancel all', async () => {
    const lines = [
      { id: 'h1', text: disclosure('Batch line one') },
      { id: 'h2', text: disclosure('Batch line two') },
      { id: 'h3', text: `${disclosure('Batch line that fails')}\n[sandbox:fail]` },
      { text: 'a line without its id' },
    ];
    writeFileSync(join(dir, 'helmets.jsonl'), lines.map((line) => JSON.stringify(line)).join('\n'));
    // Ingest only reads the manifest (--no-wait); the server's batch rounds start and follow the items.
    const ingested = await runOpflow(
      ['ingest', 'helmets.jsonl', '--workflow', 'novelty-check', '--no-wait'],
      {
        cwd: dir,
        env,
      },
    );
    expect(ingested.code, ingested.stderr).not.toBe(2);
    await page.goto(`${url}/#/batches`);
    await page.getByRole('link', { name: 'helmets' }).first().click();
    await page.getByRole('heading', { name: 'Lines that could not be used' }).waitFor();
    expect(await page.getByRole('table', { name: /problem/ }).textContent()).toContain('line 4');
    await page.getByRole('button', { name: 'Redrive 1 failed item' }).waitFor({ timeout: 60_000 });
    await page.locator('tr[data-status="SUCCEEDED"]').nth(1).waitFor();
    // The batch's own count follows its jobs at the next admission round.
    await page.locator('progress[value="3"]').waitFor();
    expect(await page.getByRole('progressbar').getAttribute('max')).toBe('3');
    expect(await accessibilityProblems(page)).toBe('');
    await shot('10-batch');
    await page.getByRole('button', { name: 'Redrive 1 failed item' }).click();
    await page.getByText('Redrive: 1 item running again.').waitFor();

    // A second batch parks at its selections: cancel all of it.
    writeFileSync(
      join(dir, 'parked.jsonl'),
      lines
        .slice(0, 2)
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    await runOpflow(
      ['ingest', 'parked.jsonl', '--workflow', 'novelty-check', '--select', 'manual', '--no-wait'],
      {
        cwd: dir,
        env,
      },
    );
    await page.goto(`${url}/#/batches`);
    await page.getByRole('link', { name: 'parked' }).first().click();
    await page.locator('tr[data-status="AWAITING_INPUT"]').nth(1).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Cancel all' }).click();
    await page.getByText('Cancelled: 2 jobs cancelled; no new items start.').waitFor();
    await page.locator('tr[data-status="CANCELLED"]').nth(1).waitFor();
    // The batch's figures follow at the next admission round; then there is nothing left to cancel.
    await page.locator('dl.facts dt:text-is("Cancelled") + dd:text-is("2")').waitFor();
    await page.getByRole('button', { name: 'Cancel all' }).waitFor({ state: 'detached' });
    await shot('11-batch-cancelled');
  }, 120_000);

  it('lists the schedules with their next fire time and triggers one now', async () => {
    await page.goto(`${url}/#/schedules`);
    const row = page.locator('tr[data-schedule="weekly-count"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('never');
    await page.getByRole('button', { name: 'Trigger now: weekly-count' }).click();
    await page.getByText(/weekly-count: job \w+ started\./).waitFor();
    await row.getByRole('link', { name: /QUEUED|RUNNING|WAITING|SUCCEEDED/ }).waitFor();
    expect(await accessibilityProblems(page)).toBe('');
    await shot('12-schedules');
  }, 60_000);

  it('pauses a schedule with a reason and resumes it, by keyboard; a pause in the file has no Resume', async () => {
    await page.goto(`${url}/#/schedules`);
    const weekly = page.locator('tr[data-schedule="weekly-count"]');
    const frozen = page.locator('tr[data-schedule="frozen-count"][data-state="paused"]');
    await weekly.locator('time').first().waitFor();
    expect(await frozen.textContent()).toContain('held in the file until the budget is agreed');
    expect(await frozen.textContent()).toContain('in opflow.config.json');
    expect(await frozen.getByRole('button', { name: /^(Resume|Pause)/ }).count()).toBe(0);

    // Pause: the form opens with the focus in its reason, which Enter submits.
    await page.getByRole('button', { name: 'Pause: weekly-count' }).focus();
    await page.keyboard.press('Enter');
    const reason = page.getByLabel('Why (shown beside the schedule)');
    await reason.waitFor();
    // The focus moves into the field just after it renders: wait for it (a locator: the CSP forbids eval).
    await page.locator('#pause-reason:focus').waitFor();
    await page.keyboard.type('supplier audit this week');
    await shot('14-schedule-pause-form');
    expect(await accessibilityProblems(page)).toBe('');
    await page.keyboard.press('Enter');
    await page.getByText('weekly-count paused: its slots are skipped until it is resumed.').waitFor();
    const paused = page.locator('tr[data-schedule="weekly-count"][data-state="paused"]');
    await paused.waitFor();
    expect(await paused.textContent()).toContain('supplier audit this week');
    expect(await paused.textContent()).toContain('none while paused');
    // The focus is back on the row, on the button that undoes it.
    // The focus is where it should be (a locator, not waitForFunction: the page's CSP forbids eval).
    await page.locator('[aria-label="Resume: weekly-count"]:focus').waitFor();
    const listed = (await (
      await fetch(`${url}/schedules`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { schedules: { name: string; pause?: { reason: string; by: string } }[] };
    expect(listed.schedules.find((schedule) => schedule.name === 'weekly-count')?.pause).toMatchObject({
      reason: 'supplier audit this week',
      by: 'runtime',
    });
    expect(await accessibilityProblems(page)).toBe('');
    await shot('15-schedule-paused');

    await page.keyboard.press('Enter');
    await page.getByText(/^weekly-count resumed: next fire /).waitFor();
    await page.locator('tr[data-schedule="weekly-count"][data-state="active"] time').first().waitFor();
    // The focus is where it should be (a locator, not waitForFunction: the page's CSP forbids eval).
    await page.locator('[aria-label="Pause: weekly-count"]:focus').waitFor();
    await shot('16-schedule-resumed');
  }, 60_000);

  it('lists the webhook deliveries received, with their answer and job', async () => {
    const post = async (body: string, id: string, key = trackerSecret) => {
      const at = new Date();
      const answer = await fetch(`${url}/webhooks/tracker`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': new Webhook(key).sign(id, at, body),
        },
        body,
      });
      return { status: answer.status, body: (await answer.json()) as { jobId?: string } };
    };
    const request = JSON.stringify({ workflow: 'patent-count', input: { query: 'TTL:(webhook helmet)' } });
    const started = await post(request, 'msg_dashboard_1');
    expect(started.status).toBe(202);
    expect((await post(request, 'msg_dashboard_1')).body.jobId).toBe(started.body.jobId);
    const forged = `whsec_${Buffer.from('somebody else entirely, not tracker').toString('base64')}`;
    expect((await post(request, 'msg_dashboard_forged', forged)).status).toBe(401);

    await page.goto(`${url}/#/`);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhook deliveries' }).waitFor();
    await page.locator('tr[data-answer="401"]').waitFor();
    const rows = page.locator('tbody tr[data-delivery]');
    expect(await rows.count()).toBe(3);
    // Newest first: the forged one, the repeat, then the one that started the job.
    const texts = await rows.allTextContents();
    expect(texts[0]).toMatch(/HTTP 401.*msg_dashboard_forged|msg_dashboard_forged.*HTTP 401/);
    expect(texts[0]).toContain('signature');
    expect(texts[1]).toContain('repeated delivery: the same job');
    expect(texts[2]).toContain('job started');
    expect(texts[2]).toContain(started.body.jobId);
    expect(await accessibilityProblems(page)).toBe('');
    await shot('17-webhooks');

    // Filtered by another source, nothing; the job's link leads to the job.
    await page.getByRole('textbox', { name: 'Source' }).fill('other');
    await page.getByRole('textbox', { name: 'Source' }).press('Enter');
    await page.getByText('No deliveries recorded.').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await rows.nth(2).getByRole('link').click();
    await page
      .getByRole('heading', { name: /TTL:\(webhook helmet\)|patent-count|\w{26}/ })
      .first()
      .waitFor();
    expect(page.url()).toContain(`#/jobs/${started.body.jobId}`);
  }, 60_000);

  it('shows why a job failed, with the error details, and retries it', async () => {
    const job = await submit({
      workflow: 'novelty-check',
      input: { text: `${disclosure('Helmet that fails')}\n[sandbox:fail]` },
    });
    await page.goto(`${url}/#/jobs/${job.id}`);
    await page.getByRole('heading', { name: 'Why it failed' }).waitFor({ timeout: 60_000 });
    const facts = await page.getByRole('region', { name: 'Why it failed' }).textContent();
    expect(facts).toMatch(/Kind/);
    expect(await accessibilityProblems(page)).toBe('');
    await shot('08-failed');
    await page.getByRole('button', { name: /^Retry from (?!the start)/ }).click();
    await page.getByText('Job retried from the step it stopped at.').waitFor();
    const retried = (await api('GET', `/jobs/${job.id}`)).job;
    expect(retried.runs?.length).toBe(1);
    await page.getByRole('heading', { name: 'Earlier runs' }).waitFor();
    await shot('09-retried');
  }, 90_000);

  it('pages through the jobs list forward and back', async () => {
    // 27 jobs under their own label, so this list has two pages of 25 and its own order.
    const ids: string[] = [];
    for (let n = 0; n < 27; n++) {
      ids.push(
        (await submit({ workflow: 'patent-count', input: { query: `TTL:(pager ${n})` }, label: 'pager' })).id,
      );
    }
    const newestFirst = [...ids].reverse();
    await page.goto(`${url}/#/?q=pager`);
    await row(newestFirst[0]!).waitFor();
    expect(await page.getByRole('link', { name: 'Previous page' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Next page' }).click();
    await row(newestFirst[25]!).waitFor();
    await row(newestFirst[0]!).waitFor({ state: 'detached' });
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    await shot('13-second-page');
    // Previous goes back one page (here the first), by keyboard too.
    await page.getByRole('link', { name: 'Previous page' }).focus();
    await page.keyboard.press('Enter');
    await row(newestFirst[0]!).waitFor();
    await row(newestFirst[25]!).waitFor({ state: 'detached' });
    expect(await page.getByRole('link', { name: 'Previous page' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(1);
  }, 90_000);
});
