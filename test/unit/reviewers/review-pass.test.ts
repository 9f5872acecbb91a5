import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { describeReview, describeRounds } from '../../../shared/cli/review-format';
import { answerSelection } from '../../../shared/engine/job-commands';
import type { Job } from '../../../shared/engine/job-record';
import { jobView } from '../../../shared/http/job-routes';
import { answerReviewPage } from '../../../shared/reviewers/confirmation-page';
import { reviewPass } from '../../../shared/reviewers/review-pass';
import { drive } from '../../support/memory-ports';
import { reviewFormOf } from '../../support/review-form';
import { startMailCatcher, startTeamsReceiver, type VerifiedNotice } from '../../support/reviewer-receivers';
import { linkSecret, type ReceiverWorld, withReceiver } from './receiver-world';

const slackText = (body: string) =>
  (JSON.parse(body) as { blocks: { text?: { text: string } }[] }).blocks
    .map((block) => block.text?.text ?? '')
    .join('\n');

describe('the reviewers pass', () => {
  it('sends one round per job to a channel and records it; a second pass sends nothing more', () =>
    withReceiver(async ({ host, bodies, job, h, passDeps }) => {
      const deps = passDeps(
        { channels: { slack: { type: 'slack' } }, rules: [{ name: 'all', notify: ['slack'] }] },
        { OPFLOW_REVIEW_SLACK_URL: `http://${host}/hook` },
      );
      // A pass whose time budget is already spent looks at nothing, and says so.
      expect(await reviewPass(deps, { until: h.clock.now() })).toEqual({
        rounds: 0,
        failedDeliveries: 0,
        timedOut: 0,
        outOfTime: true,
      });
      expect(bodies()).toHaveLength(0);
      const first = await reviewPass(deps, { until: h.clock.now() + 30_000 });
      expect(first).toEqual({ rounds: 1, failedDeliveries: 0, timedOut: 0, outOfTime: false });
      expect(await reviewPass(deps)).toEqual({
        rounds: 0,
        failedDeliveries: 0,
        timedOut: 0,
        outOfTime: false,
      });
      expect(bodies()).toHaveLength(1);
      expect(JSON.parse(bodies()[0]!).text).toContain('http://opflow.test/review/');
      const stored = (await h.store.get(job.id))!;
      expect(stored.review?.rounds[0]?.deliveries).toMatchObject([
        { channel: 'slack', state: 'sent', attempts: 1 },
      ]);
    }));

  it("does not record a round's deliveries on a later selection's review (the job answered and went on meanwhile)", async () => {
    let later: Job | undefined;
    let world: ReceiverWorld | undefined;
    const onPost = (): [number, string] => {
      // While the notice is out: answered, the job went on and awaits another selection, whose
      // first round another pass has claimed.
      const { h, job } = world!;
      const waiting = h.store.jobs.get(job.id)!;
      const offeredAt = h.clock.now() + 60_000;
      later = {
        ...waiting,
        version: waiting.version + 4,
        pending: { ...waiting.pending!, offeredAt },
        review: {
          ...waiting.review!,
          offeredAt,
          rounds: [
            { round: 1, version: waiting.version + 4, claimedUntil: offeredAt + 60_000, deliveries: [] },
          ],
        },
      };
      h.store.jobs.set(job.id, structuredClone(later));
      return [200, ''];
    };
    await withReceiver(async (w) => {
      world = w;
      const deps = w.passDeps(
        { channels: { slack: { type: 'slack' } }, rules: [{ name: 'all', notify: ['slack'] }] },
        { OPFLOW_REVIEW_SLACK_URL: `http://${w.host}/hook` },
      );
      expect((await reviewPass(deps)).rounds).toBe(1);
      expect(w.bodies()).toHaveLength(1);
      // Left as it is: the later round keeps its claim, and no delivery of it is claimed done.
      expect(await w.h.store.get(w.job.id)).toEqual(later);
    }, onPost);
  });

  it("keeps an earlier selection point's notices when the job waits at the next one (status, the API's rounds)", () =>
    withReceiver(async ({ host, bodies, job, h, passDeps }) => {
      const deps = passDeps(
        { channels: { slack: { type: 'slack' } }, rules: [{ name: 'all', notify: ['slack'] }] },
        { OPFLOW_REVIEW_SLACK_URL: `http://${host}/hook` },
      );
      expect((await reviewPass(deps)).rounds).toBe(1);
      // Answered, the job went on and now awaits a second selection point.
      const first = (await h.store.get(job.id))!;
      const offeredAt = h.clock.now() + 60_000;
      h.clock.advance(60_000);
      const next: Job = {
        ...first,
        version: first.version + 1,
        pending: { ...first.pending!, step: 'directions', offeredAt },
      };
      expect(await h.store.commit(next, first.version)).toBe(true);
      expect((await reviewPass(deps)).rounds).toBe(1);
      expect(bodies()).toHaveLength(2);
      const stored = (await h.store.get(job.id))!;
      expect(stored.review).toMatchObject({ step: 'directions', offeredAt });
      expect(stored.pastReviews).toHaveLength(1);
      expect(stored.pastReviews![0]).toMatchObject({ step: 'recommend', offeredAt: first.review!.offeredAt });
      expect(stored.pastReviews![0]!.rounds[0]).toMatchObject({
        round: 1,
        claimedUntil: 0,
        deliveries: [{ channel: 'slack', state: 'sent' }],
      });
      const rounds = jobView(stored).selectionRounds;
      expect(rounds?.map((r) => [r.step, r.notices?.map((n) => n.label)])).toEqual([
        ['recommend', ['notice']],
        ['directions', ['notice']],
      ]);
      expect(describeRounds(stored).join('\n')).toMatch(/step recommend[^\n]*sent notice/);
      // A third pass changes nothing: the earlier point's rounds stay as they are.
      expect((await reviewPass(deps)).rounds).toBe(0);
      expect((await h.store.get(job.id))!.pastReviews).toEqual(stored.pastReviews);
    }));

  it('calls for the second approver as soon as a first one confirmed, naming who chose what; the reminders keep their times', () =>
    withReceiver(async ({ host, bodies, job, h, passDeps }) => {
      const deps = passDeps(
        {
          channels: { room: { type: 'slack' } },
          rules: [
            {
              name: 'pair',
              notify: ['room'],
              approvers: 2,
              remind: { every: '1h', times: 1 },
              timeout: { after: '2h', answer: 'all' },
            },
          ],
        },
        { OPFLOW_REVIEW_ROOM_URL: `http://${host}/hook` },
      );
      const texts = () => bodies().map(slackText);
      const roundsSent = async () => (await reviewPass(deps)).rounds;
      expect(await roundsSent()).toBe(1);
      const firstNoticeAt = h.clock.now();
      h.clock.advance(10 * 60_000);
      // Nothing is due before the first approval (the reminder is 1 h after the first notice).
      expect(await roundsSent()).toBe(0);
      const parked = (await h.store.get(job.id))!;
      const chosen = [parked.pending!.options[0]!.id];
      await answerSelection(h.deps, job.id, chosen, { via: 'cli', by: 'alice' });
      expect(await roundsSent()).toBe(1);
      expect(await roundsSent()).toBe(0); // announced once
      expect(texts()).toHaveLength(2);
      expect(texts()[1]).toContain('alice approved; your confirmation is wanted');
      expect(texts()[1]).toContain(`alice chose alpha (${chosen[0]}); a second person must confirm.`);
      expect(texts()[0]).not.toContain('alice');
      // The timeout's default, each option by its label with its id beside it.
      expect(texts()[0]).toContain(
        `, every option is taken: alpha (r1), beta (r2), gamma (r3).\nThe link works until`,
      );
      const afterCall = (await h.store.get(job.id))!.review!;
      expect(afterCall.rounds.map((r) => [r.round, r.kind, r.deliveries[0]?.state])).toEqual([
        [1, undefined, 'sent'],
        [2, 'approval', 'sent'],
      ]);
      expect(afterCall.nextNoticeAt).toBe(firstNoticeAt + 3_600_000);
      // The one reminder still comes at its time, saying who approved; then no more.
      h.clock.advance(50 * 60_000);
      expect(await roundsSent()).toBe(1);
      expect(texts()[2]).toContain('Reminder: ');
      expect(texts()[2]).toContain(`alice chose alpha (${chosen[0]})`);
      expect((await h.store.get(job.id))!.review!.nextNoticeAt).toBeUndefined();
      // The job API's view labels the rounds: the first approver, the notices, the timeout's default.
      const offeredAt = parked.pending!.offeredAt;
      expect(jobView((await h.store.get(job.id))!).selectionRounds).toEqual([
        {
          step: 'recommend',
          approvals: [
            expect.objectContaining({
              round: 1,
              role: 'first approver',
              by: 'alice',
              via: 'cli',
              options: chosen,
              labels: ['alpha'],
            }),
          ],
          notices: [
            expect.objectContaining({ round: 1, label: 'notice' }),
            expect.objectContaining({ round: 2, label: 'call for the second approval' }),
            expect.objectContaining({ round: 3, label: 'reminder' }),
          ],
          timeout: {
            at: new Date(offeredAt + 2 * 3_600_000).toISOString(),
            answer: ['r1', 'r2', 'r3'],
            labels: ['alpha', 'beta', 'gamma'],
          },
        },
      ]);
      // `opflow status` says the same on one line, and names the option as alice saw it.
      const iso = (ms: number) => new Date(ms).toISOString();
      const alice = (await h.store.get(job.id))!.answers![0]!;
      expect(describeReview((await h.store.get(job.id))!)[0]).toBe(
        `approval  alpha (r1) at ${iso(alice.at)} by alice via cli (step recommend; a second person must confirm)`,
      );
      // A record of before labels were kept: the offer still awaited names its options.
      const unlabelled = { ...(await h.store.get(job.id))!, answers: [{ ...alice, labels: undefined }] };
      expect(jobView(unlabelled).answers?.[0]?.labels).toEqual(['alpha']);
      expect(describeRounds((await h.store.get(job.id))!)).toEqual([
        `rounds    step recommend: 1 first approver alice via cli at ${iso(alice.at)}; sent notice, call for the second approval, reminder; default alpha (r1), beta (r2), gamma (r3) at ${iso(offeredAt + 2 * 3_600_000)}`,
      ]);
      await answerSelection(h.deps, job.id, chosen, { via: 'api', by: 'bob' });
      expect(jobView((await h.store.get(job.id))!).selectionRounds?.[0]?.approvals).toEqual([
        expect.objectContaining({ round: 1, role: 'first approver', by: 'alice' }),
        expect.objectContaining({
          round: 2,
          role: 'second approver',
          by: 'bob',
          via: 'api',
          options: chosen,
          labels: ['alpha'],
        }),
      ]);
      h.clock.advance(3 * 3_600_000);
      expect(await roundsSent()).toBe(0);
      expect(texts()).toHaveLength(3);
      // Answered: no timeout is taken.
      expect((await h.store.get(job.id))!.answers?.some((answer) => answer.via === 'timeout')).toBe(false);
    }));

  it('at the timeout, takes the default answer and tells each channel once, with no link; recorded as a round of its own', async () => {
    const inbox = await startMailCatcher();
    try {
      await withReceiver(async ({ host, bodies, job, h, passDeps }) => {
        const deps = passDeps(
          {
            channels: {
              room: { type: 'slack' },
              hook: { type: 'webhook' },
              mail: { type: 'email', to: ['alice@example.com'] },
            },
            rules: [
              { name: 'night', notify: ['room', 'hook', 'mail'], timeout: { after: '2h', answer: 'all' } },
            ],
          },
          {
            OPFLOW_REVIEW_ROOM_URL: `http://${host}/hook`,
            OPFLOW_REVIEW_HOOK_URL: `http://${host}/signed`,
            OPFLOW_REVIEW_HOOK_SECRET: `whsec_${Buffer.from('the default notice signing secret').toString('base64')}`,
            OPFLOW_SMTP_URL: inbox.url,
          },
        );
        expect(await reviewPass(deps)).toMatchObject({ rounds: 1, timedOut: 0 });
        const offeredAt = (await h.store.get(job.id))!.pending!.offeredAt;
        h.clock.advance(2 * 3_600_000);
        // Two passes meet the job at once (two workers): one takes the default and sends its notice.
        const passes = await Promise.all([reviewPass(deps), reviewPass(deps)]);
        expect(passes.map((pass) => pass.rounds).sort()).toEqual([0, 1]);
        expect(passes.every((pass) => pass.failedDeliveries === 0)).toBe(true);
        const takenAt = new Date(offeredAt + 2 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
        const sentence = `The default answer alpha (r1), beta (r2), gamma (r3) was taken at ${takenAt} after 2h without an answer.`;
        const [slack, hook] = bodies().slice(2);
        expect(bodies()).toHaveLength(4);
        expect(slackText(slack!)).toContain(sentence);
        expect(JSON.parse(slack!).text).toBe('demo: nobody answered in time; the default answer was taken');
        expect(JSON.parse(hook!)).toMatchObject({
          type: 'selection.defaulted',
          job: { id: job.id },
          answer: { options: ['r1', 'r2', 'r3'], labels: ['alpha', 'beta', 'gamma'], text: sentence },
          at: new Date(offeredAt + 2 * 3_600_000).toISOString(),
          after: '2h',
        });
        const mail = inbox.taken.at(-1)!;
        expect(inbox.taken).toHaveLength(2);
        expect(mail.subject).toBe('demo: nobody answered in time; the default answer was taken');
        expect(mail.text).toContain(sentence);
        // Nothing to answer: no link, no button, in any channel.
        for (const text of [slack!, hook!, mail.text, mail.html]) {
          expect(text).not.toContain('/review/');
          expect(text).not.toContain('Review and answer');
        }
        // Recorded in the job's history beside the first notice; passes after it send nothing.
        h.clock.advance(3_600_000);
        expect(await reviewPass(deps)).toMatchObject({ rounds: 0, timedOut: 0 });
        expect(bodies()).toHaveLength(4);
        const stored = (await h.store.get(job.id))!;
        expect(stored.answers).toEqual([
          expect.objectContaining({ via: 'timeout', options: ['r1', 'r2', 'r3'] }),
        ]);
        expect(stored.review!.rounds.map((round) => [round.round, round.kind])).toEqual([
          [1, undefined],
          [2, 'timeout'],
        ]);
        expect(jobView(stored).selectionRounds?.[0]?.notices).toEqual([
          expect.objectContaining({ round: 1, label: 'notice' }),
          {
            round: 2,
            label: 'notice of the default taken',
            deliveries: expect.arrayContaining([
              expect.objectContaining({ channel: 'room', state: 'sent', attempts: 1 }),
              expect.objectContaining({ channel: 'hook', state: 'sent', attempts: 1 }),
              expect.objectContaining({ channel: 'mail', state: 'sent', attempts: 1 }),
            ]),
          },
        ]);
        expect(describeRounds(stored)[0]).toContain('; sent notice, notice of the default taken; default');
        // The answer's message waited for that record: it names the version stored, so the job
        // goes on at once (a message sent with the answer would be stale: dropped, and the job
        // left to the sweeper's 30 s grace).
        expect(h.queue.pending.map((p) => p.message)).toEqual([{ jobId: job.id, version: stored.version }]);
        await drive(h.deps, h.queue, h.clock);
        expect((await h.store.get(job.id))!.status).toBe('SUCCEEDED');
      });
    } finally {
      await inbox.close();
    }
  });

  it("a pass over one job (the CLI's, after a first approval) calls the second approver; serve's pass after it sends nothing twice", () =>
    withReceiver(async ({ host, bodies, job, h, passDeps }) => {
      const deps = passDeps(
        { channels: { room: { type: 'slack' } }, rules: [{ name: 'pair', notify: ['room'], approvers: 2 }] },
        { OPFLOW_REVIEW_ROOM_URL: `http://${host}/hook` },
      );
      const parked = (await h.store.get(job.id))!;
      const chosen = [parked.pending!.options[0]!.id];
      // Answered before any pass looked at the job (no notice yet): a first approval.
      h.deps.reviewApprovals = () => 2;
      await answerSelection(h.deps, job.id, chosen, { via: 'cli', by: 'alice' });
      // An unknown id is passed over; the job's first round says who approved.
      expect(await reviewPass(deps, { jobIds: ['job_unknown', job.id] })).toMatchObject({ rounds: 1 });
      expect(bodies().map(slackText)).toEqual([expect.stringContaining(`alice chose alpha (${chosen[0]})`)]);
      // Two passes more, as serve's and a second command's: the round is recorded, nothing is sent.
      expect(await reviewPass(deps)).toMatchObject({ rounds: 0 });
      expect(await reviewPass(deps, { jobIds: [job.id] })).toMatchObject({ rounds: 0 });
      expect(bodies()).toHaveLength(1);
    }));

  it('names each option by its label wherever a reviewer reads it, and a label with <script> or <!channel> arrives inert in every channel and on the confirmation page', async () => {
    const hookSecret = `whsec_${Buffer.from('the signing secret of the labels test').toString('base64')}`;
    const teams = await startTeamsReceiver();
    const inbox = await startMailCatcher();
    try {
      await withReceiver(async ({ host, bodies, job, h, passDeps }) => {
        // The platform names the options: its labels are text from outside, as hostile as text gets.
        const script = '<script>alert(1)</script> Keep claim 3';
        const channel = '<!channel> [Approve](https://evil.example) *now* & _all_';
        const waiting = (await h.store.get(job.id))!;
        const labels = [script, channel, 'gamma'];
        const pending = {
          ...waiting.pending!,
          options: waiting.pending!.options.map((option, index) => ({ ...option, label: labels[index]! })),
        };
        expect(
          await h.store.commit({ ...waiting, version: waiting.version + 1, pending }, waiting.version),
        ).toBe(true);
        const suggested = (id: string) =>
          pending.options.find((option) => option.id === id)?.preselected ? ', suggested' : '';
        const deps = {
          ...passDeps(
            {
              channels: {
                room: { type: 'slack' },
                teams: { type: 'teams' },
                hook: { type: 'webhook' },
                mail: { type: 'email', to: ['alice@example.com', 'bob@example.com'] },
              },
              rules: [
                {
                  name: 'pair',
                  notify: ['room', 'teams', 'hook', 'mail'],
                  approvers: 2,
                  timeout: { after: '2h', answer: 'all' },
                },
              ],
            },
            {
              OPFLOW_REVIEW_ROOM_URL: `http://${host}/hook`,
              OPFLOW_REVIEW_TEAMS_URL: `http://${teams.host}/teams`,
              // The generic webhook posts beside Slack (its signature is the channels e2e's, at a real clock).
              OPFLOW_REVIEW_HOOK_URL: `http://${host}/signed`,
              OPFLOW_REVIEW_HOOK_SECRET: hookSecret,
              OPFLOW_SMTP_URL: inbox.url,
            },
          ),
          policy: { allowHosts: [host, teams.host] },
        };
        expect(await reviewPass(deps)).toMatchObject({ rounds: 1, failedDeliveries: 0 });
        // alice approves through her mailed link; the others are called for the second approval.
        const aliceLink = /http:\/\/opflow\.test(\/review\/[\w.-]+)/.exec(
          inbox.taken.find((mail) => mail.to === 'alice@example.com')!.text,
        )![1]!;
        const key = await deps.secrets.linkKey();
        const page = (method: string, path: string, extra: { body?: string; cookie?: string } = {}) =>
          answerReviewPage(h.deps, key, { method, token: path.replace('/review/', ''), ...extra });
        /** The form of an opened page sent with `options` chosen, its nonce field and cookie with it. */
        const postForm = (path: string, opened: Awaited<ReturnType<typeof page>>, options: string[]) => {
          const form = reviewFormOf(String(opened.headers['set-cookie']), opened.body);
          return page('POST', path, {
            body: new URLSearchParams([
              ...options.map((option): [string, string] => ['option', option]),
              ['form', form.field],
            ]).toString(),
            cookie: form.cookie,
          });
        };
        const firstAnswer = await postForm(aliceLink, await page('GET', aliceLink), ['r1', 'r2']);
        expect(firstAnswer.status).toBe(200);
        expect(await reviewPass(deps)).toMatchObject({ rounds: 1, failedDeliveries: 0 });

        const chose = 'alice@example.com chose';
        // Slack (mrkdwn): &, < and > escaped: no <!channel> ping, no tag, no link form.
        const isWebhook = (body: string) => JSON.parse(body).type === 'selection.awaiting';
        const slack = bodies().filter((body) => !isWebhook(body));
        expect(slack).toHaveLength(2);
        for (const body of slack) {
          expect(body).not.toContain('<!channel>');
          expect(body).not.toContain('<script>');
          expect(slackText(body)).toContain('&lt;script&gt;alert(1)&lt;/script&gt; Keep claim 3 (r1)');
          expect(slackText(body)).toContain(
            '&lt;!channel&gt; [Approve](https://evil.example) *now* &amp; _all_ (r2)',
          );
        }
        expect(slackText(slack[0]!)).toContain(
          ', every option is taken: &lt;script&gt;alert(1)&lt;/script&gt; Keep claim 3 (r1), &lt;!channel&gt;',
        );
        expect(slackText(slack[1]!)).toContain(
          `${chose} &lt;script&gt;alert(1)&lt;/script&gt; Keep claim 3 (r1), &lt;!channel&gt; [Approve]`,
        );
        // Teams (an Adaptive Card's Markdown): the link, emphasis and HTML forms escaped.
        expect(teams.refused).toEqual([]);
        expect(teams.taken).toHaveLength(2);
        const inertChannel = '&lt;!channel> \\[Approve\\](https://evil.example) \\*now\\* &amp; \\_all\\_';
        for (const card of teams.taken) {
          expect(card.body).not.toContain('<script>');
          expect(card.body).not.toContain('[Approve](');
          expect(card.facts.r1).toBe(`&lt;script>alert(1)&lt;/script> Keep claim 3${suggested('r1')}`);
          expect(card.facts.r2).toBe(`${inertChannel}${suggested('r2')}`);
        }
        expect(teams.taken[1]!.texts).toContain(
          `${chose} &lt;script>alert(1)&lt;/script> Keep claim 3 (r1), ${inertChannel} (r2); a second person must confirm.`,
        );
        // Mail: HTML-escaped in the HTML part, as written in the plain text.
        const mails = inbox.taken;
        expect(mails.map((mail) => mail.to)).toEqual([
          'alice@example.com',
          'bob@example.com',
          'bob@example.com',
        ]);
        for (const mail of mails) {
          expect(mail.html).not.toContain('<script>');
          expect(mail.html).toContain(
            `&lt;script&gt;alert(1)&lt;/script&gt; Keep claim 3 (r1)${suggested('r1')}</li>`,
          );
          expect(mail.text).toContain(`- ${script} (r1)${suggested('r1')}\n`);
          expect(mail.text).toContain(`- ${channel} (r2)${suggested('r2')}\n`);
        }
        expect(mails[2]!.text).toContain(
          `${chose} ${script} (r1), ${channel} (r2); a second person must confirm.`,
        );
        expect(mails[2]!.html).toContain(`${chose} &lt;script&gt;alert(1)&lt;/script&gt; Keep claim 3 (r1)`);
        // The signed webhook is data: the labels as the platform wrote them, the default by label.
        const notices = bodies()
          .filter(isWebhook)
          .map((body) => JSON.parse(body) as VerifiedNotice['payload']);
        expect(notices).toHaveLength(2);
        expect(notices[0]!.options.map((option) => option.label)).toEqual(labels);
        expect(notices[0]!.timeout).toMatchObject({
          answer: `every option is taken: ${script} (r1), ${channel} (r2), gamma (r3)`,
          options: ['r1', 'r2', 'r3'],
        });

        // The confirmation page (bob's link): the first approval and the default by label, HTML-escaped.
        const bobLink = /http:\/\/opflow\.test(\/review\/[\w.-]+)/.exec(mails[2]!.text)![1]!;
        const bobPage = await page('GET', bobLink);
        expect(bobPage.status).toBe(200);
        expect(bobPage.body).not.toContain('<script>');
        expect(bobPage.body).toContain(
          `${chose} &lt;script&gt;alert(1)&lt;/script&gt; Keep claim 3 (r1), &lt;!channel&gt; [Approve](https://evil.example) *now* &amp; _all_ (r2). A second person must confirm`,
        );
        expect(bobPage.body).toMatch(
          /Without an answer by [^<]+ UTC, the default is taken: &lt;script&gt;alert\(1\)&lt;\/script&gt; Keep claim 3 \(r1\), &lt;!channel&gt;.* \(r2\), gamma \(r3\)\./,
        );
        const answered = await postForm(bobLink, bobPage, ['r1', 'r2']);
        expect(answered.status).toBe(200);
        expect(answered.body).not.toContain('<script>');
        expect(answered.body).toContain(
          'You chose &lt;script&gt;alert(1)&lt;/script&gt; Keep claim 3 (r1), &lt;!channel&gt;',
        );
        // The answered link: closed, saying who chose what by label.
        const closed = await page('GET', bobLink);
        expect(closed.status).toBe(409);
        expect(closed.body).toMatch(
          /by bob@example\.com via link on [^<]+: &lt;script&gt;alert\(1\)&lt;\/script&gt; Keep claim 3 \(r1\), &lt;!channel&gt;/,
        );
      });
    } finally {
      await Promise.all([teams.close(), inbox.close()]);
    }
  });

  it('keeps channel URLs, the SMTP password and link tokens out of the log, the job record (opflow status, --json) and the API view when deliveries fail', async () => {
    // An SMTP address nobody listens on.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    // A receiver that answers 500 with the request's own body (the link in it) and its URL echoed back.
    await withReceiver(
      async ({ host, job, h, passDeps }) => {
        const logged: string[] = [];
        const log = (level: string) => (message: string, fields?: Record<string, unknown>) =>
          logged.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
        const secrets = {
          slackPath: 'slack-url-secret-path',
          hookQuery: 'hook-url-secret-query',
          hookSigning: 'hook-signing-secret-value-0123456789',
          smtpPassword: 'smtp-password-secret',
          linkKey: linkSecret,
        };
        const deps = {
          ...passDeps(
            {
              channels: {
                room: { type: 'slack' },
                hook: { type: 'webhook' },
                mail: { type: 'email', to: ['alice@example.com'] },
              },
              rules: [{ name: 'all', notify: ['room', 'hook', 'mail'] }],
            },
            {
              OPFLOW_REVIEW_ROOM_URL: `http://${host}/services/${secrets.slackPath}`,
              OPFLOW_REVIEW_HOOK_URL: `http://${host}/hook?sig=${secrets.hookQuery}`,
              OPFLOW_REVIEW_HOOK_SECRET: `whsec_${Buffer.from(secrets.hookSigning).toString('base64')}`,
              OPFLOW_SMTP_URL: `smtp://opflow:${secrets.smtpPassword}@127.0.0.1:${closedPort}`,
            },
          ),
          log: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
        };
        expect(await reviewPass(deps)).toMatchObject({ rounds: 1, failedDeliveries: 3 });
        const stored = (await h.store.get(job.id))!;
        expect(stored.review!.rounds[0]!.deliveries.map((d) => [d.channel, d.state])).toEqual(
          expect.arrayContaining([
            ['room', 'failed'],
            ['hook', 'failed'],
            ['mail', 'failed'],
          ]),
        );
        const shown = [
          logged.join('\n'),
          JSON.stringify(stored), // what `opflow status --json` prints
          describeReview(stored).join('\n'), // what `opflow status` prints about the review
          JSON.stringify(jobView(stored)),
        ];
        expect(logged.join('\n')).toContain('a notice was not delivered');
        for (const text of shown) {
          for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);
          expect(text).not.toContain(Buffer.from(secrets.hookSigning).toString('base64'));
          expect(text).not.toMatch(/\/review\/[\w.-]{20,}/);
        }
      },
      ({ path, body }) => [500, `${path}\n${body}`],
    );
  });
});
