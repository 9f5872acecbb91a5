// Reviewers reached where they are, through the real `opflow serve` (bin/opflow.js): a job that
// waits for a selection is notified to a real local HTTP receiver (Slack, Teams, a signed generic
// webhook) and a real SMTP server; the mailed link opens the confirmation page (GET answers
// nothing), its form answers, the job goes on, and who answered is recorded. A changed or expired
// link is refused with a clear page; two approvers must be distinct people; a timeout takes the
// default. No secret shows in the server's log.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobView } from '../../../shared/http/answer-schemas';
import { signReviewLink } from '../../../shared/reviewers/review-link';
import { openReviewForm, postReviewForm } from '../../support/review-form';
import {
  type HookReceiver,
  type MailCatcher,
  type ReceivedPost,
  smtpPassword,
  startHookReceiver,
  startMailCatcher,
} from '../../support/reviewer-receivers';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { killRunningOpflows, type OpflowProcess } from './opflow-process';
import { childEnv, startServe } from './serve-process';

const disclosure =
  'A folding bicycle helmet made of hinged shell segments that lock into a rigid dome with a magnetic latch, so the helmet folds flat for storage and meets impact standards when open.';
const linkSecret = 'review-link-secret-of-the-e2e-test-0123456789';
const hookSecret = `whsec_${Buffer.from('generic-webhook-secret-of-the-test!!').toString('base64')}`;

describe('reviewers: notices, the confirmation page, two approvers and the timeout (opflow serve)', () => {
  let dir: string;
  let url: string;
  let serve: OpflowProcess;
  let hooks: HookReceiver;
  let inbox: MailCatcher;

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as { job: JobView } };
  };
  const until = async <T>(what: () => Promise<T | undefined> | T | undefined): Promise<T> => {
    for (;;) {
      const found = await what();
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const jobOf = async (id: string) => (await api('GET', `/jobs/${id}`)).json.job;
  const waitFor = (id: string, status: string) =>
    until(async () => {
      const job = await jobOf(id);
      return job.status === status ? job : undefined;
    });
  const create = async (tenant: string) =>
    (
      await api('POST', '/jobs', {
        workflow: 'novelty-check',
        input: { text: disclosure },
        tenant,
        label: `helmet for ${tenant}`,
        selection: { mode: 'manual' },
      })
    ).json.job;
  const linkIn = (text: string) => /(http:\/\/\S+\/review\/[\w.-]+)/.exec(text)![1]!;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-reviewers-'));
    hooks = await startHookReceiver();
    inbox = await startMailCatcher();
    writeFileSync(
      join(dir, 'opflow.config.json'),
      JSON.stringify({
        reviewers: {
          checkEverySeconds: 1,
          channels: {
            slack: { type: 'slack' },
            teams: { type: 'teams' },
            hook: { type: 'webhook' },
            mail: {
              type: 'email',
              to: ['alice@example.com', 'bob@example.com'],
              from: 'opflow <opflow@example.com>',
            },
          },
          rules: [
            { name: 'legal', match: { tenant: 'legal' }, notify: ['mail', 'slack'], approvers: 2 },
            {
              name: 'ops',
              match: { tenant: 'ops' },
              notify: ['hook'],
              timeout: { after: '3s', answer: 'preselected' },
            },
            {
              name: 'everyone',
              notify: ['slack', 'teams', 'hook', 'mail'],
              remind: { every: '1h', times: 2 },
            },
          ],
        },
      }),
    );
    const env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
      OPFLOW_REVIEW_LINK_SECRET: linkSecret,
      OPFLOW_REVIEW_SLACK_URL: `http://${hooks.host}/slack/T000/B000/slack-url-secret`,
      OPFLOW_REVIEW_TEAMS_URL: `http://${hooks.host}/teams?sig=teams-url-secret`,
      OPFLOW_REVIEW_HOOK_URL: `http://${hooks.host}/hook`,
      OPFLOW_REVIEW_HOOK_SECRET: hookSecret,
      OPFLOW_SMTP_URL: inbox.url,
      OPFLOW_CALLBACK_ALLOW_HOSTS: hooks.host,
    });
    ({ run: serve, url } = await startServe([], { env, cwd: dir }));
  });
  afterAll(async () => {
    killRunningOpflows();
    await hooks?.close();
    await inbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'notifies every channel once, and the mailed link answers through its confirmation page',
    async () => {
      const job = await create('default');
      const parked = await waitFor(job.id, 'AWAITING_INPUT');
      const options = parked.pending!.options;
      const forJob = (p: ReceivedPost) => p.body.includes(job.id);
      await until(() =>
        hooks.taken.filter(forJob).length >= 3 &&
        inbox.taken.filter((m) => m.text.includes(job.id)).length >= 2
          ? true
          : undefined,
      );
      // One round: one post per channel, however many passes ran meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const slack = hooks.taken.filter((p) => forJob(p) && p.path.startsWith('/slack'));
      const teams = hooks.taken.filter((p) => forJob(p) && p.path.startsWith('/teams'));
      const hook = hooks.taken.filter((p) => forJob(p) && p.path === '/hook');
      expect([slack.length, teams.length, hook.length]).toEqual([1, 1, 1]);
      const slackBody = JSON.parse(slack[0]!.body);
      expect(slackBody.blocks.at(-1).elements[0].url).toMatch(/\/review\//);
      expect(slackBody.text).toContain('helmet for default waits for your selection');
      const card = JSON.parse(teams[0]!.body).attachments[0];
      expect(card.contentType).toBe('application/vnd.microsoft.card.adaptive');
      expect(card.content.actions[0]).toMatchObject({ type: 'Action.OpenUrl', title: 'Review and answer' });
      // The generic webhook is signed (Standard Webhooks) and verifies with its secret.
      const verified = new Webhook(hookSecret).verify(hook[0]!.body, {
        'webhook-id': String(hook[0]!.headers['webhook-id']),
        'webhook-timestamp': String(hook[0]!.headers['webhook-timestamp']),
        'webhook-signature': String(hook[0]!.headers['webhook-signature']),
      }) as { type: string; options: unknown[] };
      expect(verified).toMatchObject({ type: 'selection.awaiting' });
      expect(verified.options).toHaveLength(options.length);
      const alice = inbox.taken.filter((m) => m.text.includes(job.id) && m.to === 'alice@example.com');
      expect(alice).toHaveLength(1);
      expect(alice[0]!.subject).toBe('helmet for default waits for your selection');
      const link = linkIn(alice[0]!.text);

      // Opening the link answers nothing.
      const opened = await fetch(link);
      expect(opened.status).toBe(200);
      expect(opened.headers.get('referrer-policy')).toBe('no-referrer');
      const html = await opened.text();
      expect(html).toContain('<form method="post">');
      expect(html).toContain('alice@example.com');
      expect((await jobOf(job.id)).status).toBe('AWAITING_INPUT');

      // A changed link is refused with a page that says so.
      const tampered = link.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      const refused = await fetch(tampered);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('This link is not valid');

      const chosen = options.slice(0, 2).map((option) => option.id);
      const fields = chosen.map((id): [string, string] => ['option', id]);
      // The token alone does not answer: a POST without the form's nonce (a page of another site, a
      // scanner replaying the link) is refused and shown a fresh form; one with another link's, too.
      const bare = await fetch(link, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
      expect(bare.status).toBe(403);
      const bareHtml = await bare.text();
      expect(bareHtml).toContain('Nothing was recorded');
      expect(bareHtml).toContain('name="form"');
      expect(bare.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
      const { form } = await openReviewForm(link);
      const withoutCookie = await fetch(link, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams([...fields, ['form', form.field]]).toString(),
      });
      expect(withoutCookie.status).toBe(403);
      const otherCookie = await postReviewForm(link, fields, {
        ...form,
        cookie: form.cookie.replace(/=.*/, '=x'),
      });
      expect(otherCookie.status).toBe(403);
      expect((await jobOf(job.id)).status).toBe('AWAITING_INPUT');

      const answered = await postReviewForm(link, fields, form);
      expect(answered.status).toBe(200);
      expect(await answered.text()).toContain('your answer is recorded');
      const done = await waitFor(job.id, 'SUCCEEDED');
      expect(done.selections.features).toEqual(chosen);
      expect(done.answers).toEqual([
        expect.objectContaining({ via: 'link', by: 'alice@example.com', options: chosen }),
      ]);
      expect(done.review?.rounds[0]?.deliveries.map((d) => [d.channel, d.state]).sort()).toEqual([
        ['hook', 'sent'],
        ['mail', 'sent'],
        ['slack', 'sent'],
        ['teams', 'sent'],
      ]);
      // The link of a closed question says who answered.
      const again = await fetch(link);
      expect(again.status).toBe(409);
      expect(await again.text()).toContain('by alice@example.com via link');
    },
    REAL_PROCESS_TIMEOUT_MS,
  );

  it('an expired link is refused with a page that says when it expired', async () => {
    const job = await create('nobody');
    const parked = await waitFor(job.id, 'AWAITING_INPUT');
    const token = signReviewLink(
      {
        jobId: job.id,
        step: parked.pending!.step,
        offeredAt: Date.parse(parked.pending!.offeredAt),
        recipient: 'alice@example.com',
        expiresAt: Date.now() - 60_000,
      },
      Buffer.from(linkSecret),
    );
    const expired = await fetch(`${url}/review/${token}`);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain('This link expired on');
  }, 60_000);

  it('two approvers: the first confirmation waits, the same person cannot confirm twice, a second person applies it', async () => {
    const job = await create('legal');
    const parked = await waitFor(job.id, 'AWAITING_INPUT');
    const chosen = [parked.pending!.options[0]!.id];
    await until(() =>
      inbox.taken.filter((m) => m.text.includes(job.id)).length >= 2 &&
      hooks.taken.some((p) => p.body.includes(job.id))
        ? true
        : undefined,
    );
    const aliceLink = linkIn(
      inbox.taken.find((m) => m.text.includes(job.id) && m.to === 'alice@example.com')!.text,
    );
    const slackLink = JSON.parse(
      hooks.taken.find((p) => p.body.includes(job.id) && p.path.startsWith('/slack'))!.body,
    ).blocks.at(-1).elements[0].url as string;
    const post = (link: string, fields: [string, string][]) => postReviewForm(link, fields);
    const first = await post(
      aliceLink,
      chosen.map((id) => ['option', id]),
    );
    expect(await first.text()).toContain('A second person must confirm');
    expect((await jobOf(job.id)).status).toBe('AWAITING_INPUT');
    // The others are called for the second confirmation at once, told who chose what; alice is not.
    const called = await until(() =>
      inbox.taken.find((m) => m.text.includes(job.id) && m.subject.includes('approved; your confirmation')),
    );
    expect(called.to).toBe('bob@example.com');
    expect(called.subject).toContain('alice@example.com approved; your confirmation is wanted');
    // Each option by the label alice saw, its id beside it.
    const option = parked.pending!.options[0]!;
    expect(called.text).toContain(`alice@example.com chose ${option.label} (${option.id}); a second person`);
    await until(() =>
      hooks.taken.some((p) => p.path.startsWith('/slack') && p.body.includes('approved; your confirmation'))
        ? true
        : undefined,
    );
    expect(inbox.taken.filter((m) => m.text.includes(job.id) && m.to === 'alice@example.com')).toHaveLength(
      1,
    );
    const twice = await post(slackLink, [
      ...chosen.map((id): [string, string] => ['option', id]),
      ['by', 'Alice@example.com'],
    ]);
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain('a second person must confirm it');
    const second = await post(slackLink, [
      ...chosen.map((id): [string, string] => ['option', id]),
      ['by', 'carol'],
    ]);
    expect(await second.text()).toContain('your answer is recorded');
    const done = await waitFor(job.id, 'SUCCEEDED');
    expect(done.answers?.map((a) => [a.by, a.via, a.applied])).toEqual([
      ['alice@example.com', 'link', false],
      ['carol', 'link', undefined],
    ]);
  }, 90_000);

  it('nobody answers: the timeout takes the suggested options, recorded as the timeout default', async () => {
    const job = await create('ops');
    const parked = await waitFor(job.id, 'AWAITING_INPUT');
    const suggested = parked.pending!.options.filter((o) => o.preselected).map((o) => o.id);
    const done = await waitFor(job.id, 'SUCCEEDED');
    expect(done.answers).toEqual([
      expect.objectContaining({ via: 'timeout', options: suggested.length ? suggested : expect.any(Array) }),
    ]);
    // The notice, then (once its delivery is recorded) the notice that the default was taken: no more.
    await until(async () =>
      (await jobOf(job.id)).selectionRounds?.[0]?.notices?.some(
        (notice) => notice.label === 'notice of the default taken' && notice.deliveries.length === 1,
      )
        ? true
        : undefined,
    );
    const posts = hooks.taken.filter((p) => p.body.includes(job.id) && p.path === '/hook');
    expect(posts.map((p) => JSON.parse(p.body).type)).toEqual(['selection.awaiting', 'selection.defaulted']);
    expect(posts[1]!.body).not.toContain('/review/');
  }, 60_000);

  it('logs no secret: no link token, channel URL or SMTP password in what the server wrote', () => {
    const log = serve.stderrSoFar();
    expect(log).toContain('/review/…');
    for (const secret of ['slack-url-secret', 'teams-url-secret', smtpPassword, linkSecret])
      expect(log).not.toContain(secret);
    expect(log).not.toMatch(/\/review\/[\w-]{20,}/);
  });
});
