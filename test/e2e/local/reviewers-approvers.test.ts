// A second approver from the moment a job waits, through the real `opflow serve` (bin/opflow.js):
// the reviewers' pass runs at start and then only hourly, so the job below is answered before any
// pass has looked at it (no notice sent, no review recorded). The rule's `approvers: 2` holds all
// the same: an answer through the API without a name is refused, the first person's is kept as a
// first approval (and the second approver is called at once, naming alice and her choice), the
// same person again is refused, and a second person's applies it. A first approval from the CLI
// (`opflow resume --select`, `opflow bulk answer`) calls for the second approver at once too: the
// command runs the reviewers' pass for that job (links to OPFLOW_PUBLIC_URL), and serve's pass
// meeting the job after it sends nothing twice.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalBackend } from '../../../shared/backends/local';
import type { JobView } from '../../../shared/http/answer-schemas';
import { reviewersConfigSchema } from '../../../shared/reviewers/review-config';
import { reviewPass } from '../../../shared/reviewers/review-pass';
import { envReviewerSecrets } from '../../../shared/reviewers/reviewer-secrets';
import { workflows } from '../../../shared/workflows';
import { type Receiver, startSignedReceiver, type VerifiedNotice } from '../../support/reviewer-receivers';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { killRunningOpflows, runOpflow } from './opflow-process';
import { childEnv, startServe } from './serve-process';

const disclosure =
  'A folding bicycle helmet made of hinged shell segments that lock into a rigid dome with a magnetic latch, so the helmet folds flat for storage and meets impact standards when open.';
const hookSecret = `whsec_${Buffer.from('generic-webhook-secret-of-the-approvers').toString('base64')}`;
const reviewersSection = {
  checkEverySeconds: 3600,
  channels: { hook: { type: 'webhook' } },
  rules: [{ name: 'pair', notify: ['hook'], approvers: 2 }],
};

describe('reviewers: two approvers before the first notice (opflow serve)', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  let dir: string;
  let url: string;
  let hook: Receiver<VerifiedNotice>;
  let env: NodeJS.ProcessEnv;

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: response.status,
      json: (await response.json()) as { job: JobView; error?: { message: string } },
    };
  };
  const jobOf = async (id: string) => (await api('GET', `/jobs/${id}`)).json.job;
  const waitFor = async (id: string, status: string) => {
    for (;;) {
      const job = await jobOf(id);
      if (job.status === status) return job;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-approvers-'));
    hook = await startSignedReceiver(hookSecret);
    writeFileSync(join(dir, 'opflow.config.json'), JSON.stringify({ reviewers: reviewersSection }));
    env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
      OPFLOW_REVIEW_LINK_SECRET: 'review-link-secret-of-the-approvers-test-0123',
      OPFLOW_REVIEW_HOOK_URL: `http://${hook.host}/hook`,
      OPFLOW_REVIEW_HOOK_SECRET: hookSecret,
      OPFLOW_CALLBACK_ALLOW_HOSTS: hook.host,
    });
    ({ url } = await startServe([], { env, cwd: dir }));
  });
  afterAll(async () => {
    killRunningOpflows();
    await hook?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a nameless answer, keeps the first approval, refuses the same person, applies the second', async () => {
    const created = await api('POST', '/jobs', {
      workflow: 'novelty-check',
      input: { text: disclosure },
      selection: { mode: 'manual' },
    });
    const parked = await waitFor(created.json.job.id, 'AWAITING_INPUT');
    // No pass has looked at the job yet: nothing was sent, no review is recorded.
    expect(parked.review).toBeUndefined();
    expect(hook.taken).toEqual([]);
    const chosen = [parked.pending!.options[0]!.id];
    const answer = (by?: string) =>
      api('POST', `/jobs/${parked.id}/selection`, { selected: chosen, ...(by ? { by } : {}) });

    const nameless = await answer();
    expect(nameless.status).toBe(400);
    expect(nameless.json.error?.message).toContain('needs two approvers');
    const first = await answer('alice');
    expect(first.status).toBe(200);
    expect(first.json.job.status).toBe('AWAITING_INPUT');
    // The first approval calls for the second at once: a pass runs now, not an hour later.
    while (hook.taken.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(hook.taken.map((notice) => [notice.payload.round, notice.payload.firstApproval])).toEqual([
      [1, { by: 'alice', options: chosen }],
    ]);
    expect((await answer(' ALICE ')).status).toBe(409);
    const second = await answer('bob');
    expect(second.status).toBe(200);
    const done = await waitFor(parked.id, 'SUCCEEDED');
    expect(done.selections.features).toEqual(chosen);
    expect(done.answers?.map((a) => [a.by, a.via, a.applied])).toEqual([
      ['alice', 'api', false],
      ['bob', 'api', undefined],
    ]);
  });

  it('opflow resume --select follows the same rule: a first approval from the CLI (--as), then a second person', async () => {
    const created = await api('POST', '/jobs', {
      workflow: 'novelty-check',
      input: { text: disclosure },
      selection: { mode: 'manual' },
    });
    const parked = await waitFor(created.json.job.id, 'AWAITING_INPUT');
    const chosen = parked.pending!.options[0]!.id;
    const chosenLabel = parked.pending!.options[0]!.label;
    const resume = (...args: string[]) =>
      runOpflow(['resume', parked.id, '--select', chosen, '--no-wait', ...args], {
        env: { ...env, OPFLOW_PUBLIC_URL: url },
        cwd: dir,
      });
    const sentBefore = hook.taken.length;
    const first = await resume('--as', 'carol');
    // Exit 3: the job still waits for a selection (the second approval).
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toContain(
      `carol's approval of ${chosenLabel} (${chosen}) is recorded; a second person must confirm it`,
    );
    // The CLI called the second approver itself (serve's pass runs hourly), linking to serve's page.
    const called = hook.taken.slice(sentBefore);
    expect(called.map((notice) => [notice.payload.job.id, notice.payload.firstApproval])).toEqual([
      [parked.id, { by: 'carol', options: [chosen] }],
    ]);
    expect(called[0]!.payload.link.url.startsWith(`${url}/review/`)).toBe(true);
    // Another pass (serve's, here run on the same database) finds that round sent: nothing twice.
    const local = createLocalBackend({ dbPath: join(dir, 'state', 'jobs.db'), outDir: join(dir, 'reports') });
    try {
      const again = await reviewPass({
        ...local,
        clock: { now: () => Date.now() },
        workflows,
        config: reviewersConfigSchema.parse(reviewersSection),
        secrets: envReviewerSecrets(env),
        publicUrl: url,
        policy: { allowHosts: [hook.host] },
      });
      expect(again.rounds).toBe(0);
    } finally {
      local.close();
    }
    expect(hook.taken.length).toBe(sentBefore + 1);
    expect((await jobOf(parked.id)).status).toBe('AWAITING_INPUT');
    const again = await resume('--by', 'Carol');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(
      'Carol has confirmed this selection already; a second person must confirm it',
    );
    // The operator's login name when no flag names them.
    const second = await runOpflow(['resume', parked.id, '--select', chosen, '--no-wait'], {
      env: { ...env, USER: 'dave' },
      cwd: dir,
    });
    expect(second.code, second.stderr).toBe(0);
    const done = await waitFor(parked.id, 'SUCCEEDED');
    expect(done.answers?.map((a) => [a.by, a.via, a.applied])).toEqual([
      ['carol', 'cli', false],
      ['dave', 'cli', undefined],
    ]);
    const status = await runOpflow(['status', parked.id], { env, cwd: dir });
    // Each answer by the option's label as the reviewer saw it, its id beside it.
    expect(status.stdout).toMatch(new RegExp(`\napproval  \\S.* \\(${chosen}\\) at `));
    expect(status.stdout).toMatch(/by carol via cli/);
    expect(status.stdout).toMatch(/by dave via cli/);
    // The rounds on one line (its first notice, sent after carol, was the call), and in --json as the job API shows them.
    expect(status.stdout).toMatch(
      /\nrounds {4}step \S+: 1 first approver carol via cli at \S+, 2 second approver dave via cli at \S+; sent notice\n/,
    );
    const json = await runOpflow(['status', parked.id, '--json'], { env, cwd: dir });
    const shown = JSON.parse(json.stdout) as JobView;
    expect(shown.selectionRounds?.[0]?.approvals.map((a) => [a.round, a.role, a.by, a.via])).toEqual([
      [1, 'first approver', 'carol', 'cli'],
      [2, 'second approver', 'dave', 'cli'],
    ]);
    expect(shown.selectionRounds).toEqual((await jobOf(parked.id)).selectionRounds);
  });

  it('opflow bulk answer follows the rule too: a first approval per job, not the answer', async () => {
    const created = await api('POST', '/jobs', {
      workflow: 'novelty-check',
      input: { text: disclosure },
      label: 'bulk-approvers',
      selection: { mode: 'manual' },
    });
    const parked = await waitFor(created.json.job.id, 'AWAITING_INPUT');
    const chosen = parked.pending!.options[0]!.id;
    const sentBefore = hook.taken.length;
    const bulk = await runOpflow(
      ['bulk', 'answer', '--label', 'bulk-approvers', '--select', chosen, '--by', 'erin', '--yes'],
      { env: { ...env, OPFLOW_PUBLIC_URL: url }, cwd: dir },
    );
    expect(bulk.code, bulk.stderr).toBe(0);
    // Its second approver is called by the command itself.
    expect(
      hook.taken.slice(sentBefore).map((notice) => [notice.payload.job.id, notice.payload.firstApproval]),
    ).toEqual([[parked.id, { by: 'erin', options: [chosen] }]]);
    const after = await jobOf(parked.id);
    expect(after.status).toBe('AWAITING_INPUT');
    expect(after.answers?.map((a) => [a.by, a.via, a.applied])).toEqual([['erin', 'bulk', false]]);
  });
});
