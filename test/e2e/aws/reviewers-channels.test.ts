// Reviewers on the aws backend, the channels and the second approver: on the emulators with the
// bundled functions, the sweeper's reviewers' pass notifies a Teams-shaped incoming webhook (it
// takes only an Adaptive Card message), a generic webhook that verifies the Standard Webhooks
// signature before it takes a notice, and two mail recipients on a real SMTP server; every URL and
// secret is read from Secrets Manager. A rule with `approvers: 2` keeps the first confirmation and
// waits (also when answered before the sweeper's first notice: the api function then calls for the
// second approver at once, and the sweeper sends nothing twice); a first approval through a mailed
// link has the webhooks function call for the second approval naming alice (her own mail left out)
// before the page answers, once though the same click is delivered twice at once, and the sweeper's
// next run sends nothing twice; the same person again is refused, through the page or the API; the
// reminder still comes and names her; a second person applies the answer, and the job's answers say
// who, when and how.
// A webhook channel whose secret does not match its receiver's is refused and retried (3 attempts,
// each recorded). Nothing the functions logged holds a channel URL, a secret or a link token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewerSecretNames } from '../../../shared/backends/aws/secrets-manager-reviewer-secrets';
import type { JobView } from '../../../shared/http/answer-schemas';
import { freshFetch } from '../../support/fresh-fetch';
import { openReviewForm, postReviewForm } from '../../support/review-form';
import {
  type MailCatcher,
  type Receiver,
  smtpPassword,
  startMailCatcher,
  startSignedReceiver,
  startTeamsReceiver,
  type TeamsCard,
  type VerifiedNotice,
} from '../../support/reviewer-receivers';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';
import { AwsWorld } from './harness/aws-world';

const disclosure =
  'A folding bicycle helmet made of hinged shell segments that lock into a rigid dome with a magnetic latch, so the helmet folds flat for storage and meets impact standards when open.';
const prefix = 'opflow/e2e/review-channels/';
const linkKey = 'review-link-key-of-the-aws-channels-test-0123456789';
const hookSecret = `whsec_${Buffer.from('generic-webhook-secret-of-the-aws-test').toString('base64')}`;
const wrongSecret = `whsec_${Buffer.from('a-secret-the-receiver-does-not-know!!').toString('base64')}`;
const teamsPath = '/workflows/teams-url-secret/triggers/manual/paths/invoke?sig=teams-sig-secret';
const minute = 60_000;
const hour = 3_600_000;

let world: AwsWorld;
let inbox: MailCatcher;
let teams: Receiver<TeamsCard>;
let hook: Receiver<VerifiedNotice>;
const savedPublicUrl = process.env.OPFLOW_PUBLIC_URL;

beforeAll(async () => {
  [inbox, teams, hook] = await Promise.all([
    startMailCatcher(),
    startTeamsReceiver(),
    startSignedReceiver(hookSecret),
  ]);
  world = await AwsWorld.start({
    workers: 1,
    // What the stack sets on the sweeper and the webhooks function when opflow.config.json has
    // reviewers (the reviewers given as the harness's variable instead of the config item).
    env: (env) => ({
      ...env,
      OPFLOW_REVIEW_SECRET_PREFIX: prefix,
      OPFLOW_CALLBACK_ALLOW_HOSTS: `${teams.host},${hook.host}`,
      OPFLOW_REVIEWERS: JSON.stringify({
        channels: {
          teams: { type: 'teams' },
          hook: { type: 'webhook' },
          mail: { type: 'email', to: ['alice@example.com', 'bob@example.com'], from: 'opflow@example.com' },
          stale: { type: 'webhook' },
        },
        rules: [
          {
            name: 'pair',
            match: { workflow: 'novelty-check' },
            notify: ['teams', 'hook', 'mail'],
            remind: { every: '1h', times: 1 },
            approvers: 2,
          },
          { name: 'stale-secret', match: { workflow: 'find-solution' }, notify: ['stale'] },
        ],
      }),
    }),
  });
  // The links point at the HTTP API, known once the gateway listens; the pass reads it when it runs.
  process.env.OPFLOW_PUBLIC_URL = world.gateway.url;
  const secrets = world.emulators.secretsManager!;
  secrets.setSecret(reviewerSecretNames.linkKey(prefix), linkKey);
  secrets.setSecret(reviewerSecretNames.smtpUrl(prefix), inbox.url);
  secrets.setSecret(reviewerSecretNames.channel(prefix, 'teams', 'url'), `http://${teams.host}${teamsPath}`);
  secrets.setSecret(reviewerSecretNames.channel(prefix, 'hook', 'url'), `http://${hook.host}/notices/hook`);
  secrets.setSecret(reviewerSecretNames.channel(prefix, 'hook', 'secret'), hookSecret);
  secrets.setSecret(reviewerSecretNames.channel(prefix, 'stale', 'url'), `http://${hook.host}/notices/stale`);
  secrets.setSecret(reviewerSecretNames.channel(prefix, 'stale', 'secret'), wrongSecret);
}, REAL_PROCESS_TIMEOUT_MS);

afterAll(async () => {
  await world?.stop();
  if (savedPublicUrl === undefined) delete process.env.OPFLOW_PUBLIC_URL;
  else process.env.OPFLOW_PUBLIC_URL = savedPublicUrl;
  await Promise.all([teams?.close(), hook?.close(), inbox?.close()]);
});

const jobOf = async (id: string) => (await world.api('GET', `/jobs/${id}`)).body.job as unknown as JobView;
const mailsTo = (id: string, to: string) => inbox.taken.filter((m) => m.text.includes(id) && m.to === to);
const cardsOf = (id: string) => teams.taken.filter((card) => card.texts.some((text) => text.includes(id)));
const noticesOf = (id: string) => hook.taken.filter((notice) => notice.payload.job.id === id);
const linkIn = (text: string) => /(http:\/\/\S+\/review\/[\w.-]+)/.exec(text)![1]!;
const optionFields = (ids: string[]) => ids.map((id): [string, string] => ['option', id]);

/** A job that waits for its selection, settled at AWAITING_INPUT. */
async function parkedJob(body: Record<string, unknown>): Promise<JobView> {
  const id = await world.submit({ ...body, selection: { mode: 'manual' } });
  const [job] = await world.settle([id]);
  expect(job?.status).toBe('AWAITING_INPUT');
  return jobOf(id);
}

/** One run of the sweeper function, as its schedule would, `ms` on. */
async function sweepLater(ms = minute) {
  world.advanceTo(world.now() + ms);
  return (await world.sweep()) as {
    reviews?: { rounds: number; failedDeliveries: number; timedOut: number };
  };
}

describe('reviewers on AWS: Teams, the signed webhook, mail and a second approver', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  it('delivers a Teams card and a verified signed notice; two distinct people must confirm; history says who, when and how', async () => {
    const parked = await parkedJob({
      workflow: 'novelty-check',
      input: { text: disclosure },
      label: 'folding helmet',
    });
    const options = parked.pending!.options;
    expect((await sweepLater()).reviews).toMatchObject({ rounds: 1, failedDeliveries: 0 });

    // Teams: one Adaptive Card the receiver took, with the options as facts and the page's link.
    const [card] = cardsOf(parked.id);
    expect(cardsOf(parked.id)).toHaveLength(1);
    expect(card!.path).toBe(teamsPath);
    expect(card!.texts[0]).toBe('folding helmet waits for your selection');
    expect(card!.texts).toContain('Two people must confirm the same choice.');
    expect(Object.keys(card!.facts).sort()).toEqual(options.map((option) => option.id).sort());
    expect(card!.url.startsWith(`${world.gateway.url}/review/`)).toBe(true);
    // The generic webhook: one notice whose signature the receiver verified with its secret.
    const [notice] = noticesOf(parked.id);
    expect(noticesOf(parked.id)).toHaveLength(1);
    expect(notice!.payload).toMatchObject({
      type: 'selection.awaiting',
      round: 1,
      approvals: 2,
      job: { id: parked.id, workflow: 'novelty-check', label: 'folding helmet' },
    });
    expect(notice!.payload.options.map((option) => option.id)).toEqual(options.map((option) => option.id));
    expect(notice!.payload.link.url.startsWith(`${world.gateway.url}/review/`)).toBe(true);
    expect(hook.refused.filter((r) => r.path === '/notices/hook')).toEqual([]);
    expect(teams.refused).toEqual([]);
    // Mail: each recipient has a message of their own, with a link of their own.
    const aliceLink = linkIn(mailsTo(parked.id, 'alice@example.com')[0]!.text);
    const bobLink = linkIn(mailsTo(parked.id, 'bob@example.com')[0]!.text);
    expect(aliceLink).not.toBe(bobLink);
    expect(
      (await jobOf(parked.id)).review?.rounds[0]?.deliveries.map((d) => [d.channel, d.state]).sort(),
    ).toEqual([
      ['hook', 'sent'],
      ['mail', 'sent'],
      ['teams', 'sent'],
    ]);

    // Alice confirms through her mailed link, the same click delivered twice at once: kept once as
    // a first approval; the job waits on.
    const chosen = options.slice(0, 2).map((option) => option.id);
    const aliceAt = world.now();
    const form = (await openReviewForm(aliceLink)).form;
    const clicks = await Promise.all([
      postReviewForm(aliceLink, optionFields(chosen), form),
      postReviewForm(aliceLink, optionFields(chosen), form),
    ]);
    const pages = await Promise.all(clicks.map((click) => click.text()));
    expect(clicks.map((click) => click.status)).toContain(200);
    expect(pages.join('\n')).toContain('A second person must confirm');
    const waiting = await jobOf(parked.id);
    expect(waiting.status).toBe('AWAITING_INPUT');
    expect(waiting.answers).toEqual([
      expect.objectContaining({ by: 'alice@example.com', via: 'link', options: chosen, applied: false }),
    ]);

    // Before any sweep, the webhooks function that recorded it has called for the second approval on
    // every channel, once, naming alice and her choice (not a reminder); alice's own mail gets none.
    const callsOf = () =>
      noticesOf(parked.id).filter(
        (notice) => (notice.payload as { secondApproval?: boolean }).secondApproval === true,
      );
    expect(callsOf()).toHaveLength(1);
    expect(callsOf()[0]!.payload).toMatchObject({
      round: 2,
      secondApproval: true,
      firstApproval: { by: 'alice@example.com', options: chosen },
    });
    expect(cardsOf(parked.id)).toHaveLength(2);
    expect(cardsOf(parked.id)[1]!.texts[0]).toBe(
      'folding helmet: alice@example.com approved; your confirmation is wanted',
    );
    expect(mailsTo(parked.id, 'bob@example.com')).toHaveLength(2);
    expect(mailsTo(parked.id, 'alice@example.com')).toHaveLength(1);

    // Alice again, through the Teams link (a room's link: she says who she is): refused.
    const twice = await postReviewForm(card!.url, [...optionFields(chosen), ['by', ' Alice@Example.com ']]);
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain('a second person must confirm it');
    // And through the API: without a name nothing is recorded; as alice, refused too.
    const nameless = await world.api('POST', `/jobs/${parked.id}/selection`, { body: { selected: chosen } });
    expect(nameless.status).toBe(400);
    expect(nameless.body.error?.message).toContain('needs two approvers');
    const again = await world.api('POST', `/jobs/${parked.id}/selection`, {
      body: { selected: chosen, by: 'alice@example.com' },
    });
    expect(again.status).toBe(409);
    expect((await jobOf(parked.id)).answers).toHaveLength(1);

    // The sweeper's next run finds that round sent (claimed on the job): nothing twice.
    expect((await sweepLater()).reviews).toMatchObject({ rounds: 0, failedDeliveries: 0 });
    expect(callsOf()).toHaveLength(1);
    expect(cardsOf(parked.id)).toHaveLength(2);
    expect(mailsTo(parked.id, 'bob@example.com')).toHaveLength(2);

    // The reminder an hour on still comes, and tells every channel that alice chose.
    await sweepLater(hour);
    const reminder = noticesOf(parked.id).at(-1)!.payload;
    expect(reminder).toMatchObject({
      round: 3,
      firstApproval: { by: 'alice@example.com', options: chosen },
    });
    expect(cardsOf(parked.id)).toHaveLength(3);
    expect(cardsOf(parked.id)[2]!.texts[0]).toBe('Reminder: folding helmet waits for your selection');
    // Each option by its label with its id beside it (the labels' escaping: review-pass unit tests).
    const reminded = cardsOf(parked.id)[2]!.texts.join('\n');
    expect(reminded).toMatch(/alice@example\.com chose .+; a second person must confirm\./);
    for (const id of chosen) expect(reminded).toContain(`(${id})`);
    expect(mailsTo(parked.id, 'bob@example.com')).toHaveLength(3);
    expect(mailsTo(parked.id, 'alice@example.com')).toHaveLength(1);

    // Bob confirms the same options through his link: the answer applies and the job goes on.
    const bobAt = world.now();
    const second = await postReviewForm(bobLink, optionFields(chosen));
    expect(second.status).toBe(200);
    expect(await second.text()).toContain('your answer is recorded');
    const [settled] = await world.settle([parked.id]);
    expect(settled?.status).toBe('SUCCEEDED');
    const done = await jobOf(parked.id);
    expect(done.selections.features).toEqual(chosen);
    expect(done.answers?.map((a) => [a.by, a.via, a.applied, a.options])).toEqual([
      ['alice@example.com', 'link', false, chosen],
      ['bob@example.com', 'link', undefined, chosen],
    ]);
    // When: each answer at the (simulated) time it was given.
    expect(done.answers?.map((a) => Date.parse(a.at))).toEqual([aliceAt, bobAt]);
    const closed = await freshFetch(card!.url);
    expect(closed.status).toBe(409);
    expect(await closed.text()).toContain('by bob@example.com via link');
  });

  it('an answer through the API before the sweeper has looked at the job still needs a second approver, called by the api at once', async () => {
    const parked = await parkedJob({ workflow: 'novelty-check', input: { text: disclosure } });
    // No pass has run since the job began to wait: nothing sent, no review recorded.
    expect(parked.review).toBeUndefined();
    expect(noticesOf(parked.id)).toEqual([]);
    const chosen = [parked.pending!.options[0]!.id];
    const answer = (by?: string) =>
      world.api('POST', `/jobs/${parked.id}/selection`, {
        body: { selected: chosen, ...(by ? { by } : {}) },
      });
    const nameless = await answer();
    expect(nameless.status).toBe(400);
    expect(nameless.body.error?.message).toContain('needs two approvers');
    expect((await answer('carol')).status).toBe(200);
    // The api function ran the reviewers' pass for the job before answering: the notice asking for
    // the second approver is there already, without a sweep, and says who chose what.
    expect(noticesOf(parked.id).map((notice) => notice.payload.firstApproval)).toEqual([
      { by: 'carol', options: chosen },
    ]);
    expect(cardsOf(parked.id)).toHaveLength(1);
    expect((await jobOf(parked.id)).status).toBe('AWAITING_INPUT');
    expect((await answer('Carol')).status).toBe(409);
    // The sweeper's next run finds that round sent: nothing twice.
    expect((await sweepLater()).reviews).toMatchObject({ rounds: 0 });
    expect(noticesOf(parked.id)).toHaveLength(1);
    expect((await answer('dave')).status).toBe(200);
    const [settled] = await world.settle([parked.id]);
    expect(settled?.status).toBe('SUCCEEDED');
    expect((await jobOf(parked.id)).answers?.map((a) => [a.by, a.via, a.applied])).toEqual([
      ['carol', 'api', false],
      ['dave', 'api', undefined],
    ]);
  });

  it('a webhook channel whose signature does not verify is refused, retried twice, and recorded as failed', async () => {
    const parked = await parkedJob({
      workflow: 'find-solution',
      input: { problem: 'Lithium battery packs swell at high temperature; how can swelling be limited?' },
      label: 'battery swelling',
    });
    const refusedOfStale = () => hook.refused.filter((r) => r.path === '/notices/stale');
    expect((await sweepLater()).reviews).toMatchObject({ rounds: 1, failedDeliveries: 1 });
    expect(refusedOfStale()).toHaveLength(1);
    expect(refusedOfStale()[0]!.why).toContain('signature');
    const delivery = async () => (await jobOf(parked.id)).review?.rounds[0]?.deliveries[0];
    expect(await delivery()).toMatchObject({
      channel: 'stale',
      state: 'failed',
      attempts: 1,
      error: 'HTTP 401',
    });
    // The second attempt a minute on, the third five minutes after it, then no more.
    await sweepLater(minute);
    expect(await delivery()).toMatchObject({ state: 'failed', attempts: 2 });
    await sweepLater(5 * minute);
    expect(await delivery()).toMatchObject({ state: 'failed', attempts: 3 });
    await sweepLater(hour);
    expect(refusedOfStale()).toHaveLength(3);
    expect(hook.taken.filter((notice) => notice.path === '/notices/stale')).toEqual([]);
    expect((await jobOf(parked.id)).status).toBe('AWAITING_INPUT');
  });

  it('logs no secret: no channel URL, signing secret, SMTP password, link key or link token', () => {
    const logged = JSON.stringify(world.logLines());
    expect(logged).toContain('/review/…');
    expect(logged).toContain('reviewers: a notice was not delivered');
    for (const secret of [
      'teams-url-secret',
      'teams-sig-secret',
      hookSecret,
      hookSecret.slice('whsec_'.length),
      wrongSecret.slice('whsec_'.length),
      '/notices/',
      smtpPassword,
      linkKey,
    ])
      expect(logged).not.toContain(secret);
    expect(logged).not.toMatch(/\/review\/[\w-]{20,}/);
  });
});
