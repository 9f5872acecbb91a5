/**
 * Cost caps of schedules and webhook sources through the real bin, against a sandbox on its own port
 * whose call ledger says what was billed: one `opflow serve` fires two schedules every second (its
 * own scheduler, nothing triggered by hand) and takes signed deliveries of two webhook sources.
 *
 * - `run-capped` (maxUnitsPerRun 8, maxUnitsPerDay 1000): its first run stops before its next step
 *   once billed 8 units (FAILED, cost-cap) and the schedule pauses with the run's figures;
 * - `day-capped` (maxUnitsPerRun 100, maxUnitsPerDay 12): its first run may spend only the day's 12,
 *   stops there, and the schedule pauses with the day's figures;
 * - neither fires again while paused; `opflow schedules`, GET /schedules and the dashboard's
 *   Schedules page (Chromium, a screenshot) show each reason; `opflow schedules resume` lifts one;
 * - webhook source `alerts` (maxUnitsPerRun 8) stops its job at 8; `watch` (maxUnitsPerDay 12) lets
 *   its first job spend the 12 and refuses the next delivery (429 cost-cap, the figures), which
 *   GET /webhook-deliveries and the dashboard's Webhooks page show.
 * The agent search (30 units) is never called for a capped job, and what the sandbox billed is what
 * each job counted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaledTaskDurations } from '../../../shared/runtime/local/sandbox-launch';
import { type Sandbox, startSandbox } from '../../../shared/sandbox';
import { workflows } from '../../../shared/workflows';
import { accessibilityProblems, openBrowser, screenshot } from '../dashboard/browser';
import { childEnv, killRunningOpflows, runOpflow } from './opflow-process';
import { startServe } from './serve-process';

const speed = 300;
const KEY = 'sk-opflow-schedule-caps-000000000';
const token = 'schedule-caps-token-0123456789abcdef';
const secret = `whsec_${Buffer.from('schedule-webhook-cost-caps-secret').toString('base64')}`;
const input = workflows.get('novelty-check')!.example!;
const agentSearch = 'ai35-7NoveltySearchAgentSearch';

const config = {
  schedules: [
    {
      name: 'run-capped',
      cron: '* * * * * *',
      workflow: 'novelty-check',
      input,
      maxUnitsPerRun: 8,
      maxUnitsPerDay: 1000,
    },
    {
      name: 'day-capped',
      cron: '* * * * * *',
      workflow: 'novelty-check',
      input,
      maxUnitsPerRun: 100,
      maxUnitsPerDay: 12,
    },
  ],
  webhooks: {
    alerts: { workflow: 'novelty-check', input: { text: { $from: '/text' } }, maxUnitsPerRun: 8 },
    watch: { workflow: 'novelty-check', input: { text: { $from: '/text' } }, maxUnitsPerDay: 12 },
  },
};

interface JobJson {
  id: string;
  status: string;
  step: string;
  source: string;
  label?: string;
  maxUnits?: number;
  usage: { billedUnits: number; calls: number };
  lastError?: { kind: string; message: string };
}
interface ScheduleJson {
  name: string;
  pause?: { reason: string; by: string };
  next?: string;
  lastJob?: { id: string; status: string };
  caps?: { maxUnitsPerRun?: number; maxUnitsPerDay?: number; spentLast24h: number; dayCapFreesAt?: string };
}

describe('cost caps of schedules and webhook sources (real opflow serve, its scheduler, the dashboard)', () => {
  let sandbox: Sandbox;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let url: string;
  let browser: Browser | undefined;
  let page: Page;

  const api = async <T>(
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body }),
    });
    return { status: response.status, body: (await response.json()) as T, headers: response.headers };
  };
  const schedulesNow = async () =>
    (await api<{ schedules: ScheduleJson[] }>('GET', '/schedules')).body.schedules;
  const jobsOf = async (source: string) =>
    (await api<{ jobs: JobJson[] }>('GET', `/jobs?source=${source}&limit=100`)).body.jobs;
  /** What the sandbox billed so far, and the operations it was called for. */
  const ledger = () => {
    const calls = sandbox.ledger.entries();
    return {
      units: calls.reduce((sum, call) => sum + call.billedUnits, 0),
      operations: calls.map((call) => call.operationId),
    };
  };
  const until = async <T>(what: string, check: () => Promise<T | undefined>, ms = 120_000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  const deliver = async (source: string, id: string, payload: unknown) => {
    const body = JSON.stringify(payload);
    const at = new Date();
    return api<{ jobId?: string; error?: { code: string; message: string } }>(
      'POST',
      `/webhooks/${source}`,
      body,
      {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(id, at, body),
      },
    );
  };
  const terminal = (job: JobJson | undefined) =>
    job && ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status) ? job : undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-schedule-caps-'));
    writeFileSync(join(dir, 'opflow.config.json'), JSON.stringify(config));
    sandbox = await startSandbox({
      port: 0,
      keys: [{ key: KEY }],
      taskDurations: scaledTaskDurations(speed),
      defaultTaskDuration: { meanMs: 10_000 / speed, spreadMs: 5_000 / speed },
    });
    env = childEnv({
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_API_KEY: KEY,
      OPFLOW_SANDBOX_SPEED: String(speed),
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'out'),
      OPFLOW_SERVE_TOKEN: token,
      OPFLOW_WEBHOOK_SECRET_ALERTS: secret,
      OPFLOW_WEBHOOK_SECRET_WATCH: secret,
    });
    ({ url } = await startServe([], { env, cwd: dir }));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    killRunningOpflows();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the scheduler’s first run of each stops at its cap, and each schedule pauses with the figures', async () => {
    // Both are paused by their first runs: the scheduler never fires a second (overlap skip while
    // the first runs, paused once it stopped).
    const paused = await until('both schedules paused', async () => {
      const schedules = await schedulesNow();
      return schedules.every((schedule) => schedule.pause) ? schedules : undefined;
    });
    const jobs = await until('the schedules’ jobs ended', async () => {
      const listed = await jobsOf('schedule');
      return listed.every((job) => terminal(job)) ? listed : undefined;
    });
    expect(jobs).toHaveLength(2);
    const runCapped = jobs.find((job) => job.label?.startsWith('run-capped '))!;
    const dayCapped = jobs.find((job) => job.label?.startsWith('day-capped '))!;
    // The run cap is the run's; the day cap leaves its first run the day's 12, not the run's 100.
    expect(runCapped).toMatchObject({ status: 'FAILED', maxUnits: 8, lastError: { kind: 'cost-cap' } });
    expect(dayCapped).toMatchObject({ status: 'FAILED', maxUnits: 12, lastError: { kind: 'cost-cap' } });
    expect(runCapped.usage.billedUnits).toBeGreaterThanOrEqual(8);
    expect(dayCapped.usage.billedUnits).toBeGreaterThanOrEqual(12);
    // What the sandbox billed is what the two jobs counted; no agent search was paid for.
    const billed = ledger();
    expect(billed.units).toBe(runCapped.usage.billedUnits + dayCapped.usage.billedUnits);
    expect(billed.operations).not.toContain(agentSearch);

    const byName = Object.fromEntries(paused.map((schedule) => [schedule.name, schedule]));
    expect(byName['run-capped']!.pause).toEqual({
      by: 'runtime',
      at: expect.any(String),
      reason: `run cost cap reached: job ${runCapped.id} was billed ${runCapped.usage.billedUnits} units, maxUnitsPerRun is 8; it stopped before step "${runCapped.step}" (resume the schedule to go on; opflow retry ${runCapped.id} --max-units <more> finishes that run)`,
    });
    expect(byName['day-capped']!.pause).toEqual({
      by: 'runtime',
      at: expect.any(String),
      reason: expect.stringMatching(
        new RegExp(
          `^cost cap reached: its 1 job\\(s\\) of the last 24 hours were billed ${dayCapped.usage.billedUnits} units, maxUnitsPerDay is 12; the 24 hours' spend falls below it at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(resume it to go on\\)$`,
        ),
      ),
    });
    // Each stopped job names the cap that stopped it and what to change, not only its own figure.
    expect(dayCapped.lastError!.message).toMatch(
      /^day cost cap of schedule day-capped reached: maxUnitsPerDay is 12, its jobs of the last 24 hours had been billed 0 units when this one started, so this job could spend 12; /,
    );
    expect(dayCapped.lastError!.message).toContain(
      `then retry it (opflow retry ${dayCapped.id} --max-units <more>), or raise maxUnitsPerDay of day-capped in opflow.config.json (schedules)`,
    );
    expect(runCapped.lastError!.message).toMatch(
      /^run cost cap of schedule run-capped reached: maxUnitsPerRun is 8; /,
    );
    // The caps and the day's spend against them are shown, paused or not.
    expect(byName['run-capped']!.caps).toEqual({
      maxUnitsPerRun: 8,
      maxUnitsPerDay: 1000,
      spentLast24h: runCapped.usage.billedUnits,
      jobsLast24h: 1,
    });
    expect(byName['day-capped']!.caps).toMatchObject({
      maxUnitsPerRun: 100,
      maxUnitsPerDay: 12,
      spentLast24h: dayCapped.usage.billedUnits,
      dayCapFreesAt: expect.any(String),
    });
    expect(byName['run-capped']!.next).toBeUndefined();

    // Paused, neither fires again: three more seconds of slots make no job and no call.
    const calls = sandbox.ledger.entries().length;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await jobsOf('schedule')).toHaveLength(2);
    expect(sandbox.ledger.entries()).toHaveLength(calls);

    // opflow schedules shows each reason, as text and as JSON.
    const text = await runOpflow(['schedules'], { env, cwd: dir });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`next: paused: run cost cap reached: job ${runCapped.id} was billed`);
    expect(text.stdout).toContain(
      'next: paused: cost cap reached: its 1 job(s) of the last 24 hours were billed',
    );
    expect(text.stdout).toContain(
      `caps: per run 8 units; per day 1000 units, ${runCapped.usage.billedUnits} billed in the last 24 hours (1 jobs)\n`,
    );
    expect(text.stdout).toMatch(
      new RegExp(
        `caps: per run 100 units; per day 12 units, ${dayCapped.usage.billedUnits} billed in the last 24 hours \\(1 jobs\\), at the cap until \\d{4}-`,
      ),
    );
    const listed = await runOpflow(['schedules', '--json'], { env, cwd: dir });
    const fromCli = (JSON.parse(listed.stdout) as { schedules: ScheduleJson[] }).schedules;
    expect(fromCli.map((schedule) => [schedule.name, schedule.pause?.reason])).toEqual(
      paused.map((schedule) => [schedule.name, schedule.pause?.reason]),
    );
  }, 240_000);

  it('webhook sources: the run cap stops a job; the day cap stops the first and refuses the next delivery', async () => {
    const text = input.text as string;
    const alerts = await deliver('alerts', 'msg_caps_alerts_1', { text });
    expect(alerts.status, JSON.stringify(alerts.body)).toBe(202);
    const watch = await deliver('watch', 'msg_caps_watch_1', { text });
    expect(watch.status, JSON.stringify(watch.body)).toBe(202);
    const [alertsJob, watchJob] = await until('the deliveries’ jobs ended', async () => {
      const jobs = await jobsOf('webhook');
      const ended = [alerts.body.jobId, watch.body.jobId].map((id) =>
        terminal(jobs.find((job) => job.id === id)),
      );
      return ended.every(Boolean) ? (ended as JobJson[]) : undefined;
    });
    expect(alertsJob).toMatchObject({ status: 'FAILED', maxUnits: 8, lastError: { kind: 'cost-cap' } });
    // The source has no run cap: its first job may spend the day's 12.
    expect(watchJob).toMatchObject({ status: 'FAILED', maxUnits: 12, lastError: { kind: 'cost-cap' } });
    expect(ledger().operations).not.toContain(agentSearch);

    const refused = await deliver('watch', 'msg_caps_watch_2', { text });
    expect(refused.status).toBe(429);
    const reason = refused.body.error!.message;
    expect(reason).toMatch(
      new RegExp(
        `^cost cap reached: the 1 job\\(s\\) of source watch of the last 24 hours were billed ${watchJob!.usage.billedUnits} units, maxUnitsPerDay is 12; deliveries start jobs again once the last 24 hours' spend is below it \\(at \\d{4}-[^)]+ if nothing more is billed\\); this delivery is recorded but starts no job`,
      ),
    );
    expect(refused.body.error!.code).toBe('cost-cap');
    // The sender is told when to send again: about a day from now.
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(23 * 3600);
    // The watch job names the source's day cap.
    expect(watchJob!.lastError!.message).toMatch(
      /^day cost cap of webhook source watch reached: maxUnitsPerDay is 12, .* raise maxUnitsPerDay of watch in opflow.config.json \(webhooks\)$/,
    );

    // opflow webhooks lists the sources: watch capped (why, until when, how to resume), alerts open.
    const sources = await runOpflow(['webhooks'], { env, cwd: dir });
    expect(sources.code, sources.stderr).toBe(0);
    expect(sources.stdout).toContain(
      'alerts  novelty-check  tenant default\n  state: open\n  caps: per run 8 units;',
    );
    expect(sources.stdout).toMatch(
      /watch {2}novelty-check {2}tenant default\n {2}state: capped: day cost cap reached: its 1 job\(s\) of the last 24 hours were billed \d+ units, maxUnitsPerDay is 12; .* again by itself at \d{4}-.* or at once when maxUnitsPerDay of webhooks\.watch is raised/,
    );
    const sourcesJson = await runOpflow(['webhooks', '--json'], { env, cwd: dir });
    const listedSources = JSON.parse(sourcesJson.stdout).sources as {
      name: string;
      state: string;
      resumesAt?: string;
    }[];
    expect(listedSources.map((source) => [source.name, source.state])).toEqual([
      ['alerts', 'open'],
      ['watch', 'capped'],
    ]);
    expect(Date.parse(listedSources[1]!.resumesAt!)).toBeGreaterThan(Date.now() + 23 * 3600_000);
    // GET /webhook-sources: the same states, with the caps, the day's spend and the last delivery.
    const listed = await api<{
      sources: {
        name: string;
        state: string;
        reason?: string;
        resumesAt?: string;
        caps: { spentLast24h: number; maxUnitsPerDay?: number };
        lastDelivery?: { status: number; webhookId?: string };
      }[];
    }>('GET', '/webhook-sources');
    expect(listed.status).toBe(200);
    const [alertsView, watchView] = listed.body.sources;
    expect(alertsView).toMatchObject({
      name: 'alerts',
      state: 'open',
      caps: { maxUnitsPerRun: 8, spentLast24h: alertsJob!.usage.billedUnits, jobsLast24h: 1 },
    });
    expect(watchView).toMatchObject({
      name: 'watch',
      state: 'capped',
      resumesAt: listedSources[1]!.resumesAt,
      caps: { spentLast24h: watchJob!.usage.billedUnits, maxUnitsPerDay: 12 },
      lastDelivery: { status: 429, webhookId: 'msg_caps_watch_2' },
    });
    expect(watchView!.reason).toMatch(/^day cost cap reached: its 1 job\(s\)/);
    const { body } = await api<{
      deliveries: { webhookId?: string; status: number; error?: { message: string } }[];
    }>('GET', '/webhook-deliveries?source=watch');
    expect(body.deliveries.find((delivery) => delivery.webhookId === 'msg_caps_watch_2')).toMatchObject({
      status: 429,
      error: { message: reason },
    });
  }, 240_000);

  it('the dashboard shows each schedule’s pause reason and the refused delivery; a resume lifts a pause', async () => {
    ({ browser, page } = await openBrowser());
    await page.goto(`${url}/`);
    await page.getByLabel('Server token').fill(token);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Jobs' }).waitFor();

    await page.goto(`${url}/#/schedules`);
    const row = (name: string) => page.locator(`tr[data-schedule="${name}"]`);
    await row('run-capped').waitFor();
    for (const name of ['run-capped', 'day-capped'])
      expect(await row(name).getAttribute('data-state')).toBe('paused');
    expect(await row('run-capped').textContent()).toContain('run cost cap reached: job');
    expect(await row('run-capped').textContent()).toContain('maxUnitsPerRun is 8');
    expect(await row('day-capped').textContent()).toContain('(resume it to go on)');
    // Each row shows its caps and the day's spend against them.
    expect(await row('run-capped').textContent()).toMatch(
      /Caps: 8 units a run · \d+ of 1,000 units a day spent/,
    );
    expect(await row('day-capped').textContent()).toMatch(
      /Caps: 100 units a run · \d+ of 12 units a day spent .* at the day cap until/,
    );
    await screenshot(page, 'schedules-cost-caps');

    await page.goto(`${url}/#/webhooks`);
    // Each source's state: watch capped (why, when it reopens, its cap and spend), alerts open.
    const watchRow = page.locator('tr[data-source="watch"][data-state="capped"]');
    await watchRow.waitFor();
    expect(await watchRow.textContent()).toMatch(
      /Capped day cost cap reached: its 1 job\(s\) of the last 24 hours .*reopens .* if nothing more is billed.*Caps: \d+ of 12 units a day spent \(last 24 h\)/,
    );
    expect(await watchRow.textContent()).toContain('HTTP 429');
    expect(await page.locator('tr[data-source="alerts"]').getAttribute('data-state')).toBe('open');
    expect(await page.locator('tr[data-source="alerts"]').textContent()).toMatch(
      /Open.*Caps: 8 units a run · \d+ units? spent in the last 24 h/,
    );
    const refusedRow = page.locator('tr[data-answer="429"]');
    await refusedRow.waitFor();
    expect(await accessibilityProblems(page)).toBe('');
    expect(await refusedRow.textContent()).toContain(
      'cost-cap: cost cap reached: the 1 job(s) of source watch',
    );
    await screenshot(page, 'webhooks-cost-cap');

    // Resumed from the CLI, the run-capped schedule fires again (the run that paused it does not
    // pause it again); its next run stops at the cap too and pauses it again, naming that run.
    const resumed = await runOpflow(['schedules', 'resume', 'run-capped'], { env, cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    const first = (await jobsOf('schedule')).filter((job) => job.label?.startsWith('run-capped '));
    expect(first).toHaveLength(1);
    const again = await until('run-capped paused by its next run', async () => {
      const schedule = (await schedulesNow()).find((candidate) => candidate.name === 'run-capped');
      return schedule?.pause && !schedule.pause.reason.includes(first[0]!.id) ? schedule : undefined;
    });
    const runs = (await jobsOf('schedule')).filter((job) => job.label?.startsWith('run-capped '));
    expect(runs).toHaveLength(2);
    const second = runs.find((job) => job.id !== first[0]!.id)!;
    expect(second).toMatchObject({ status: 'FAILED', maxUnits: 8, lastError: { kind: 'cost-cap' } });
    expect(again.pause?.reason).toContain(`run cost cap reached: job ${second.id} was billed`);
    // The page refreshes the schedules every 5 s.
    await page.goto(`${url}/#/schedules`);
    await page.locator(`tr[data-schedule="run-capped"][data-state="paused"]`).waitFor();
    expect(await row('run-capped').textContent()).toContain(second.id);

    // A long pause reason at 1280 px wraps and is cut, its whole text kept: Resume stays in view.
    const long =
      `waiting for the legal review of the search strategy: ${'the docket owner asked to hold every run of this schedule until the counsel confirms the query and the classification codes; '.repeat(4)}`.slice(
        0,
        480,
      );
    const paused = await runOpflow(['schedules', 'pause', 'day-capped', '--reason', long], { env, cwd: dir });
    expect(paused.code, paused.stderr).toBe(0);
    await page.goto(`${url}/#/schedules`);
    await page.locator('tr[data-schedule="day-capped"] .reason-clamp').waitFor();
    await page
      .locator('tr[data-schedule="day-capped"] .reason-clamp', { hasText: long.slice(0, 60) })
      .waitFor();
    const resume = page.getByRole('button', { name: 'Resume: day-capped' });
    const box = (await resume.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(1280);
    const reason = page.locator('tr[data-schedule="day-capped"] .reason-clamp');
    expect(await reason.getAttribute('title')).toBe(long);
    expect(await reason.textContent()).toBe(long);
    // The table does not scroll sideways: its card is no wider than the page shows.
    const card = (await page.locator('.table-card').first().boundingBox())!;
    const table = (await page.locator('.table-card table').first().boundingBox())!;
    expect(table.width).toBeLessThanOrEqual(card.width);
    await screenshot(page, 'schedules-long-reason');
  }, 180_000);
});
