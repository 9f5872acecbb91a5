/**
 * `npm run screenshots`: retakes every image in docs/images from the real dashboard. It starts
 * `opflow serve` (bin/opflow.js) on a temporary data folder with the built-in sandbox, makes the state
 * each page needs through the job API (jobs, a batch, schedules run, a job answered through a
 * reviewer's link and one still waiting, cancelled jobs for a bulk retry, a streamed answer on a
 * second server whose sandbox streams slowly), and photographs each page with playwright-core and
 * Debian's chromium at 1280 × 900. `screenshots` names every image; a unit test holds docs/images
 * and the docs' references to it. Names given (`npm run screenshots -- review-page.png`) retake those
 * images only; the state is made the same way.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const images = join(root, 'docs', 'images');
const token = 'screenshots-token-0123456789abcdef';
const linkSecret = 'screenshots-review-link-secret-0123456789';
/** The signing secret of the webhook source "tracker" (OPFLOW_WEBHOOK_SECRET_TRACKER). */
const trackerSecret = `whsec_${Buffer.from('the signing secret of the tracker source').toString('base64')}`;
/** The signing secret of the config's webhook source "issue-tracker" (OPFLOW_WEBHOOK_SECRET_ISSUE_TRACKER). */
const issueTrackerSecret = `whsec_${Buffer.from('the signing secret of the issue tracker').toString('base64')}`;
const viewport = { width: 1280, height: 900 };

/** Every image of docs/images, each what it shows. */
export const screenshots = {
  'dashboard-overview.png': 'the overview, with a day of jobs and their billed units',
  'dashboard-jobs.png': 'the jobs list',
  'dashboard-job.png': 'a finished novelty check: figures and steps',
  'dashboard-report.png': 'its report, full page',
  'dashboard-answers.png':
    "a job two people approved (a reviewer's link, then the job API): its answers and approval rounds, each option by its label",
  'review-page.png': "the confirmation page a reviewer's link opens",
  'dashboard-streamed-answer.png': 'an LLM chat answer while it arrives',
  'dashboard-batch.png': 'a finished batch',
  'dashboard-schedules.png': 'schedules with their run history',
  'dashboard-webhooks.png':
    'webhook sources (one of the config with its caps, one known only by its signing secret) and the newest deliveries: one accepted, two refused with their reason',
  'dashboard-bulk.png': 'a bulk retry counted by its filter',
  'dashboard-new-job.png': "a job's form filled in with the workflow's example",
  'dashboard-upload.png': 'a manifest checked, with a refused line and the estimate',
} as const;
type ImageName = keyof typeof screenshots;

interface JobView {
  id: string;
  status: string;
  pending?: { options: { id: string }[] };
  answers?: { options: string[]; applied?: boolean }[];
}

/** `opflow serve` on `dir` with `env`; resolves with its URL (the first line of its --json output). */
function serve(dir: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('OPFLOW_')),
  );
  const child = spawn(process.execPath, [join(root, 'bin', 'opflow.js'), 'serve', '--port', '0', '--json'], {
    cwd: dir,
    env: {
      ...inherited,
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
      OPFLOW_SERVE_TOKEN: token,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((done, fail) => {
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const line = stdout.split('\n')[0];
      if (stdout.includes('\n') && line) done({ url: (JSON.parse(line) as { url: string }).url, child });
    });
    child.on('exit', (code) => fail(new Error(`opflow serve exited (${code}):\n${stderr}`)));
  });
}

/** The job API of `url`, with the token: the answer's JSON, or an error naming the refusal. */
function jobApi(url: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? (method === 'GET' ? undefined : '{}') : JSON.stringify(body),
    });
    const answer = (await response.json()) as T;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
}

async function until<T>(what: () => Promise<T | undefined>, label: string, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await what();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${label}`);
    await new Promise((done) => setTimeout(done, 250));
  }
}

/** A local stand-in for a Slack incoming webhook: the bodies posted to it go to `posts`. */
export async function slackReceiver(posts: string[] = []) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      posts.push(body);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { posts, server, port: (server.address() as AddressInfo).port };
}

/**
 * The opflow.config.json of the main server: two schedules (one paused in the file), a webhook source
 * with caps, and the reviewers' rules (two approvers for the tenant legal; one for the others, whose
 * default is taken after 4 h).
 */
function writeConfig(dir: string) {
  writeFileSync(
    join(dir, 'opflow.config.json'),
    JSON.stringify({
      schedules: [
        {
          name: 'weekly-count',
          cron: '0 6 * * 1',
          workflow: 'patent-count',
          input: { query: 'TTL:(helmet)' },
          catchUp: 'none',
        },
        {
          name: 'nightly-count',
          cron: '0 2 * * *',
          workflow: 'patent-count',
          input: { query: 'TTL:(bicycle AND lock)' },
          catchUp: 'none',
          paused: { reason: 'held until the budget is agreed' },
        },
      ],
      webhooks: {
        'issue-tracker': {
          tenant: 'default',
          workflow: 'patent-count',
          input: { query: { $from: '/issue/title' } },
          label: { $from: '/issue/key' },
          maxUnitsPerRun: 20,
          maxUnitsPerDay: 500,
        },
      },
      reviewers: {
        checkEverySeconds: 1,
        channels: { 'ip-team': { type: 'slack' } },
        rules: [
          { name: 'legal-pair', match: { tenant: 'legal' }, notify: ['ip-team'], approvers: 2 },
          {
            name: 'novelty',
            notify: ['ip-team'],
            remind: { every: '1h', times: 2 },
            timeout: { after: '4h', answer: 'preselected' },
          },
        ],
      },
    }),
  );
}

const ideas = [
  'A folding bicycle helmet made of hinged shell segments that lock into a rigid dome with a magnetic latch.',
  'A drone battery kept warm by its own discharge through a thin resistive film around the cells.',
  'A solar panel coating that sheds dust by electrodynamic waves driven from the panel itself.',
];
const queries = [
  'TTL:(helmet AND hinge)',
  'TTL:(helmet AND magnet)',
  'TTL:(bicycle AND lock)',
  'TTL:(drone AND battery AND heater)',
  'TTL:(solar AND dust)',
  'TTL:(separator AND ceramic)',
];

/** Everything the pages show, made through the job API; the ids the pictures need. */
async function makeState(url: string, dir: string, posts: string[]) {
  const api = jobApi(url);
  const job = async (id: string) => (await api<{ job: JobView }>('GET', `/jobs/${id}`)).job;
  const settled = (id: string, status: string) =>
    until(async () => ((await job(id)).status === status ? job(id) : undefined), `${id} ${status}`);
  const start = async (body: Record<string, unknown>) =>
    (await api<{ job: JobView }>('POST', '/jobs', body)).job.id;

  const novelty = await start({
    workflow: 'novelty-check',
    input: { text: ideas[1] },
    label: 'drone battery',
  });
  const reviewed = await start({
    workflow: 'novelty-check',
    input: { text: ideas[0] },
    label: 'helmet for review',
    tenant: 'legal',
    selection: { mode: 'manual' },
  });
  const waiting = await start({
    workflow: 'novelty-check',
    input: { text: ideas[2] },
    label: 'solar coating for review',
    selection: { mode: 'manual' },
  });
  const manifest = queries.map((query, n) => JSON.stringify({ id: `q${n + 1}`, query })).join('\n');
  const { batch } = await api<{ batch: { id: string } }>('POST', '/batch-uploads', {
    fileName: 'helmet-queries.jsonl',
    manifest,
    workflow: 'patent-count',
    batchName: 'helmet-queries',
  });
  // One run after the other, so each run's changes are since the one before (the sandbox drifts).
  for (let n = 0; n < 3; n++) {
    const { jobId } = await api<{ jobId: string }>('POST', '/schedules/weekly-count/trigger');
    await settled(jobId, 'SUCCEEDED');
  }
  await webhookDeliveries(url);
  // Two find-solution jobs cancelled at their selection point: what a bulk retry counts.
  const lamps = [];
  for (const label of ['lamp that dims at dusk', 'lamp that follows the reader']) {
    const id = await start({
      workflow: 'find-solution',
      input: { text: `A reading ${label}.` },
      label,
      selection: { mode: 'manual' },
    });
    lamps.push(id);
  }
  for (const id of lamps) {
    await settled(id, 'AWAITING_INPUT');
    await api('POST', `/jobs/${id}/cancel`);
    await settled(id, 'CANCELLED');
  }
  // The reviewer's link of each waiting job, from its Slack notice.
  const linkOf = (id: string) =>
    until(async () => {
      const post = posts.find((body) => body.includes(id));
      return post ? (JSON.parse(post).blocks.at(-1).elements[0].url as string) : undefined;
    }, `the notice of ${id}`);
  await settled(reviewed, 'AWAITING_INPUT');
  await settled(waiting, 'AWAITING_INPUT');
  await settled(novelty, 'SUCCEEDED');
  await until(async () => {
    const { batch: shown } = await api<{ batch: { status: string } }>('GET', `/batches/${batch.id}`);
    return shown.status === 'FINISHED' ? shown : undefined;
  }, 'the batch');
  return {
    novelty,
    reviewed,
    reviewedLink: await linkOf(reviewed),
    waitingLink: await linkOf(waiting),
    batch: batch.id,
    manifestFile: join(dir, 'helmet-queries-2.jsonl'),
    settled,
  };
}

/**
 * Deliveries to the webhook source "tracker" (known by its secret): one that starts a job, its
 * repeat, and two refused; then one to the config's "issue-tracker", mapped from an issue.
 */
async function webhookDeliveries(url: string) {
  const { Webhook } = await import('standardwebhooks');
  const deliver = (id: string, body: string, secret = trackerSecret, source = 'tracker') => {
    const at = new Date();
    return fetch(`${url}/webhooks/${source}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(id, at, body),
      },
      body,
    });
  };
  const request = JSON.stringify({ workflow: 'patent-count', input: { query: 'TTL:(helmet AND visor)' } });
  await deliver('msg_2Kq8Tz41', request);
  await deliver('msg_2Kq8Tz41', request);
  await deliver(
    'msg_2Kq9Ab07',
    JSON.stringify({ workflow: 'patent-counter', input: { query: 'TTL:(visor)' } }),
  );
  await deliver('msg_2KqAx93c', request, `whsec_${Buffer.from('not the tracker secret').toString('base64')}`);
  const issue = JSON.stringify({ issue: { key: 'IP-142', title: 'TTL:(helmet AND chin strap)' } });
  await deliver('msg_2KqC7w2d', issue, issueTrackerSecret, 'issue-tracker');
}

/** The second approver confirms, through the job API, what the first approved by link. */
async function secondApproval(url: string, id: string) {
  const api = jobApi(url);
  const first = await until(async () => {
    const { job } = await api<{ job: JobView }>('GET', `/jobs/${id}`);
    return job.answers?.find((answer) => answer.applied === false);
  }, `the first approval of ${id}`);
  await api('POST', `/jobs/${id}/selection`, { selected: first.options, by: 'Erin Second' });
}

async function main(only: ReadonlySet<string> = new Set()) {
  const unknown = [...only].filter((name) => !(name in screenshots));
  if (unknown.length > 0) throw new Error(`no such image: ${unknown.join(', ')}`);
  const { chromium } = await import('playwright-core');
  const { startSandbox } = await import('../shared/sandbox/start-sandbox');
  const { SANDBOX_API_KEY } = await import('../shared/sandbox/constants');
  const dir = mkdtempSync(join(tmpdir(), 'opflow-screenshots-'));
  const streamDir = mkdtempSync(join(tmpdir(), 'opflow-screenshots-stream-'));
  const receiver = await slackReceiver();
  const sandbox = await startSandbox({ streamChunkDelayMs: 400 });
  const children: ChildProcess[] = [];
  const browser = await chromium.launch({
    executablePath: process.env.OPFLOW_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    writeConfig(dir);
    const main = await serve(dir, {
      OPFLOW_SANDBOX_SPEED: '100',
      OPFLOW_SANDBOX_DRIFT: '7',
      OPFLOW_REVIEW_LINK_SECRET: linkSecret,
      OPFLOW_REVIEW_IP_TEAM_URL: `http://127.0.0.1:${receiver.port}/services/T000/B000/slack-url-secret`,
      OPFLOW_CALLBACK_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
      OPFLOW_WEBHOOK_SECRET_TRACKER: trackerSecret,
      OPFLOW_WEBHOOK_SECRET_ISSUE_TRACKER: issueTrackerSecret,
    });
    children.push(main.child);
    const streaming = await serve(streamDir, {
      OPFLOW_BASE_URL: sandbox.url,
      OPFLOW_API_KEY: SANDBOX_API_KEY,
    });
    children.push(streaming.child);
    console.error(`opflow serve at ${main.url}; making the pages' state (about a minute)…`);
    const state = await makeState(main.url, dir, receiver.posts);

    const page = await browser.newPage({ viewport });
    page.setDefaultTimeout(60_000);
    page.on('dialog', (dialog) => void dialog.accept());
    const signIn = async (url: string) => {
      await page.goto(`${url}/`);
      await page.getByLabel('Server token').fill(token);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
    };
    const shoot = async (name: ImageName) => {
      if (only.size > 0 && !only.has(name)) return;
      // Nothing moving: the pointer away, the page settled.
      await page.mouse.move(0, viewport.height - 1);
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(images, name) });
      console.error(`docs/images/${name}: ${screenshots[name]}`);
    };
    const open = async (hash: string, heading: string | RegExp) => {
      await page.goto(`${main.url}/${hash}`);
      await page.getByRole('heading', { name: heading }).first().waitFor();
    };

    await signIn(main.url);
    await open('#/overview', 'Overview');
    await page.locator('svg').first().waitFor();
    await shoot('dashboard-overview.png');
    await open('#/', 'Jobs');
    await page.locator('.status-SUCCEEDED').first().waitFor();
    await shoot('dashboard-jobs.png');

    await open(`#/jobs/${state.novelty}`, /drone battery/i);
    await page.locator('.status-SUCCEEDED').first().waitFor();
    await shoot('dashboard-job.png');
    await open(`#/jobs/${state.novelty}/report`, /^Report/);
    await page
      .frameLocator('iframe')
      .getByRole('heading', { name: /Conclusion/ })
      .waitFor();
    await shoot('dashboard-report.png');

    // A reviewer approves through the link, a second person through the job API; the page before,
    // then the job's answers and approval rounds after.
    await page.goto(state.waitingLink);
    await page.getByRole('button', { name: 'Confirm this answer' }).waitFor();
    await shoot('review-page.png');
    await page.goto(state.reviewedLink);
    await page.getByLabel(/Your name or mail address/).fill('Dana Reviewer');
    await page.getByRole('button', { name: 'Confirm this answer' }).click();
    await page.getByRole('heading', { name: 'Your confirmation is recorded' }).waitFor();
    await secondApproval(main.url, state.reviewed);
    await state.settled(state.reviewed, 'SUCCEEDED');
    await open(`#/jobs/${state.reviewed}`, /helmet/i);
    await page.getByRole('table', { name: /answers? to its selection points/ }).waitFor();
    await page.evaluate("document.getElementById('answers-heading').scrollIntoView({ block: 'start' })");
    await shoot('dashboard-answers.png');

    await open(`#/batches/${state.batch}`, /helmet-queries/);
    await page.locator(`progress[value="${queries.length}"][max="${queries.length}"]`).waitFor();
    await shoot('dashboard-batch.png');
    await open('#/schedules', 'Schedules');
    await page.getByRole('heading', { name: 'Run history' }).waitFor();
    await page.locator('td[data-changes] .changes').first().waitFor();
    await shoot('dashboard-schedules.png');
    await open('#/webhooks', 'Webhook deliveries');
    await page.locator('tr[data-answer="401"]').waitFor();
    await page.getByRole('table', { name: /^2 sources/ }).waitFor();
    await shoot('dashboard-webhooks.png');

    await open('#/bulk', 'Bulk actions');
    await page.getByLabel(/^Retry/).check();
    await page.getByLabel('Workflow').selectOption('find-solution');
    await page.getByRole('button', { name: 'Count the jobs' }).click();
    await page.getByRole('button', { name: /^Retry 2 jobs/ }).waitFor();
    // The count and its confirmation in view, the action chosen above it.
    await page.evaluate("document.getElementById('preview-heading').scrollIntoView({ block: 'center' })");
    await shoot('dashboard-bulk.png');

    await open('#/new?workflow=novelty-check', 'New job');
    await page.getByRole('button', { name: 'Fill in the example' }).click();
    await page.getByLabel('Label').fill('separator from the form');
    await page.evaluate('document.activeElement.blur(); window.scrollTo(0, 0)');
    await shoot('dashboard-new-job.png');

    writeFileSync(
      state.manifestFile,
      [...queries.slice(0, 4).map((query, n) => ({ id: `r${n + 1}`, query })), { id: 'r5', query: '' }]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    await open('#/upload', 'Upload a manifest');
    await page.getByLabel('Manifest file (required)').setInputFiles(state.manifestFile);
    await page.getByLabel('Workflow (required)').selectOption('patent-count');
    await page.getByRole('button', { name: 'Check and estimate' }).click();
    await page.getByRole('region', { name: 'What it would do' }).waitFor();
    await shoot('dashboard-upload.png');

    // The streamed answer: a second server whose sandbox streams slowly, caught mid-answer.
    await signIn(streaming.url);
    const { job } = await jobApi(streaming.url)<{ job: JobView }>('POST', '/jobs', {
      workflow: 'llm-chat',
      input: { text: 'What limits the cycle life of solid-state battery separators?', model: 'ai50' },
    });
    await page.goto(`${streaming.url}/#/jobs/${job.id}`);
    await page.locator('[data-answer-state="streaming"]').waitFor();
    await until(
      async () =>
        Number(await page.locator('.answer-text').getAttribute('data-length')) > 120 ? true : undefined,
      'a streamed answer of some length',
    );
    await page.locator('.answer-text').scrollIntoViewIfNeeded();
    await shoot('dashboard-streamed-answer.png');
  } finally {
    await browser.close();
    // Each server gone before its folder is removed (it writes there until it exits).
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill();
          }),
      ),
    );
    receiver.server.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(streamDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(new Set(process.argv.slice(2))).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
