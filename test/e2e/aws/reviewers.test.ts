// Reviewers on the aws backend, end to end on the emulators with the bundled functions: a job that
// waits for a selection is notified by the sweeper's reviewers' pass (mail through a real local SMTP
// server, Slack through a real local HTTP receiver, the SMTP server and the Slack URL read from
// Secrets Manager); the mailed link's GET opens the confirmation page on the webhooks function and
// answers nothing, its POST answers, and the step worker takes the job on. On the shared fake clock,
// a job nobody answers is reminded once after an hour, then takes the timeout's default answer, and
// mail and Slack are told once that it was taken.
// No link token, channel URL or SMTP password shows in what the functions logged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewerSecretNames } from '../../../shared/backends/aws/secrets-manager-reviewer-secrets';
import type { JobView } from '../../../shared/http/answer-schemas';
import { freshFetch } from '../../support/fresh-fetch';
import { postReviewForm } from '../../support/review-form';
import {
  type HookReceiver,
  type MailCatcher,
  smtpPassword,
  startHookReceiver,
  startMailCatcher,
} from '../../support/reviewer-receivers';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

const disclosure =
  'A folding bicycle helmet made of hinged shell segments that lock into a rigid dome with a magnetic latch, so the helmet folds flat for storage and meets impact standards when open.';
const prefix = 'opflow/e2e/review/';
const linkKey = 'review-link-key-of-the-aws-e2e-test-0123456789';
const hour = 3_600_000;

let world: AwsWorld;
let inbox: MailCatcher;
let hooks: HookReceiver;
const savedPublicUrl = process.env.OPFLOW_PUBLIC_URL;

beforeAll(async () => {
  inbox = await startMailCatcher();
  hooks = await startHookReceiver();

  world = await AwsWorld.start({
    workers: 1,
    // What the stack sets on the sweeper and the webhooks function when opflow.config.json has reviewers
    // (the reviewers given as the harness's variable instead of the config item).
    env: (env) => ({
      ...env,
      OPFLOW_REVIEW_SECRET_PREFIX: prefix,
      OPFLOW_CALLBACK_ALLOW_HOSTS: hooks.host,
      OPFLOW_REVIEWERS: JSON.stringify({
        channels: {
          mail: { type: 'email', to: ['alice@example.com'], from: 'opflow <opflow@example.com>' },
          chat: { type: 'slack' },
        },
        rules: [
          {
            name: 'everyone',
            notify: ['mail', 'chat'],
            remind: { every: '1h', times: 1 },
            timeout: { after: '3h', answer: 'preselected' },
          },
        ],
      }),
    }),
  });
  // The links point at the HTTP API, known once the gateway listens; the pass reads it when it runs.
  process.env.OPFLOW_PUBLIC_URL = world.gateway.url;
  const secrets = world.emulators.secretsManager!;
  secrets.setSecret(reviewerSecretNames.linkKey(prefix), linkKey);
  secrets.setSecret(reviewerSecretNames.smtpUrl(prefix), inbox.url);
  secrets.setSecret(
    reviewerSecretNames.channel(prefix, 'chat', 'url'),
    `http://${hooks.host}/services/T000/B000/slack-url-secret`,
  );
}, REAL_PROCESS_TIMEOUT_MS);

afterAll(async () => {
  await world?.stop();
  if (savedPublicUrl === undefined) delete process.env.OPFLOW_PUBLIC_URL;
  else process.env.OPFLOW_PUBLIC_URL = savedPublicUrl;
  await hooks?.close();
  await inbox?.close();
});

const jobOf = async (id: string) => (await world.api('GET', `/jobs/${id}`)).body.job as unknown as JobView;
const mailsOf = (id: string) => inbox.taken.filter((mail) => mail.text.includes(id));
const linkIn = (text: string) => /(http:\/\/\S+\/review\/[\w.-]+)/.exec(text)![1]!;

/** A novelty check that waits for its features to be chosen, settled at AWAITING_INPUT. */
async function parkedJob(): Promise<JobView> {
  const id = await world.submit({
    workflow: 'novelty-check',
    input: { text: disclosure },
    label: 'folding helmet',
    selection: { mode: 'manual' },
  });
  const [job] = await world.settle([id]);
  expect(job?.status).toBe('AWAITING_INPUT');
  return jobOf(id);
}

/** One run of the sweeper function, as its schedule would, a minute on. */
async function sweepLater(ms = 60_000) {
  world.advanceTo(world.now() + ms);
  return (await world.sweep()) as { reviews?: { rounds: number; timedOut: number } };
}

describe('reviewers on AWS: the sweeper notifies, the webhooks function serves the page', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it("notifies mail and Slack once; the mailed link's GET answers nothing, its POST answers and the job goes on", async () => {
    const parked = await parkedJob();
    const run = await sweepLater();
    expect(run.reviews).toMatchObject({ rounds: 1, timedOut: 0 });
    const [mail] = mailsOf(parked.id);
    expect(mailsOf(parked.id)).toHaveLength(1);
    expect(mail).toMatchObject({
      to: 'alice@example.com',
      subject: 'folding helmet waits for your selection',
    });
    const slack = hooks.taken.map((post) => post.body).filter((body) => body.includes(parked.id));
    expect(slack).toHaveLength(1);
    expect(JSON.parse(slack[0]!).blocks.at(-1).elements[0].url).toContain(`${world.gateway.url}/review/`);
    // A second run a minute later sends nothing again.
    expect((await sweepLater()).reviews).toMatchObject({ rounds: 0 });
    expect(mailsOf(parked.id)).toHaveLength(1);

    const link = linkIn(mail!.text);
    expect(link.startsWith(`${world.gateway.url}/review/`)).toBe(true);
    const opened = await freshFetch(link);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('referrer-policy')).toBe('no-referrer');
    const page = await opened.text();
    expect(page).toContain('<form method="post">');
    expect(page).toContain('alice@example.com');
    expect((await jobOf(parked.id)).status).toBe('AWAITING_INPUT');

    const tampered = link.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const refused = await freshFetch(tampered);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('This link is not valid');

    const chosen = parked.pending!.options.slice(0, 2).map((option) => option.id);
    const fields = chosen.map((id): [string, string] => ['option', id]);
    // Through the gateway, the page's nonce cookie goes out in the answer's `cookies` and comes back
    // in the event's: a POST without it is refused, one from the page answers.
    const bare = await freshFetch(link, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    expect(bare.status).toBe(403);
    expect(await bare.text()).toContain('Nothing was recorded');
    const answered = await postReviewForm(link, fields);
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain('your answer is recorded');
    const [settled] = await world.settle([parked.id]);
    expect(settled?.status).toBe('SUCCEEDED');
    const done = await jobOf(parked.id);
    expect(done.selections.features).toEqual(chosen);
    // Recorded with the labels alice saw, as the job API shows them.
    const labels = parked.pending!.options.slice(0, 2).map((option) => option.label);
    expect(done.answers).toEqual([
      expect.objectContaining({ via: 'link', by: 'alice@example.com', options: chosen, labels }),
    ]);
    expect(done.selectionRounds?.[0]?.approvals[0]?.labels).toEqual(labels);
    expect(done.review?.rounds[0]?.deliveries.map((d) => [d.channel, d.state]).sort()).toEqual([
      ['chat', 'sent'],
      ['mail', 'sent'],
    ]);
    const again = await freshFetch(link);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('by alice@example.com via link');
  });

  it('nobody answers: one reminder after an hour, then the timeout takes the suggested options', async () => {
    const parked = await parkedJob();
    expect((await sweepLater()).reviews).toMatchObject({ rounds: 1 });
    expect(mailsOf(parked.id)).toHaveLength(1);
    // The reminder is due an hour after the first notice; one only (`times: 1`).
    await sweepLater(hour);
    expect(mailsOf(parked.id)).toHaveLength(2);
    await sweepLater(hour - 60_000);
    expect(mailsOf(parked.id)).toHaveLength(2);
    expect((await jobOf(parked.id)).status).toBe('AWAITING_INPUT');

    // Three hours after the offer, the next run answers with the default.
    const run = await sweepLater(hour);
    expect(run.reviews).toMatchObject({ timedOut: 1, rounds: 1 });
    const [settled] = await world.settle([parked.id]);
    expect(settled?.status).toBe('SUCCEEDED');
    const done = await jobOf(parked.id);
    const suggested = parked.pending!.options.filter((option) => option.preselected).map((o) => o.id);
    expect(done.answers).toEqual([
      expect.objectContaining({
        via: 'timeout',
        options: suggested.length > 0 ? suggested : expect.any(Array),
      }),
    ]);
    // Mail and Slack are told once that the default was taken, with no link; recorded as round 3.
    expect(done.review?.rounds.map((round) => round.round)).toEqual([1, 2, 3]);
    expect(done.selectionRounds?.[0]?.notices?.at(-1)).toMatchObject({
      label: 'notice of the default taken',
      deliveries: expect.arrayContaining([
        expect.objectContaining({ channel: 'mail', state: 'sent' }),
        expect.objectContaining({ channel: 'chat', state: 'sent' }),
      ]),
    });
    const told = mailsOf(parked.id).at(-1)!;
    expect(mailsOf(parked.id)).toHaveLength(3);
    expect(told.subject).toBe('folding helmet: nobody answered in time; the default answer was taken');
    expect(told.text).not.toContain('/review/');
    const slack = hooks.taken.map((post) => post.body).filter((body) => body.includes(parked.id));
    expect(slack).toHaveLength(3);
    expect(slack.at(-1)).toContain('the default answer was taken');
    expect(slack.at(-1)).not.toContain('/review/');
    // The next run sends nothing more.
    expect((await sweepLater()).reviews).toMatchObject({ rounds: 0, timedOut: 0 });
    expect(mailsOf(parked.id)).toHaveLength(3);
  });

  it('logs no secret: no link token, channel URL, SMTP password or link key', () => {
    const logged = JSON.stringify(world.logLines());
    expect(logged).toContain('/review/…');
    for (const secret of ['slack-url-secret', smtpPassword, linkKey]) expect(logged).not.toContain(secret);
    expect(logged).not.toMatch(/\/review\/[\w-]{20,}/);
  });
});
