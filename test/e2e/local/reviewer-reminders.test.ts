// Reminders on the local backend, through the real `opflow serve` (bin/opflow.js), with time made
// short by the config (a pass every second, reminders every few seconds): a job that waits for a
// selection is reminded through each configured channel (a Teams-shaped webhook that takes only an
// Adaptive Card, a generic webhook that verifies the signature, mail on a real SMTP server) until
// it is answered, and not after; a rule's `times` bounds the reminders; a timeout with a configured
// default answer applies it (between reminders), recorded as the timeout's and shown by
// `opflow status`, and each channel is told once that it was taken. That nothing more is sent is
// shown against a witness job reminded every second meanwhile, not by sleeping. No channel URL,
// secret, SMTP password or link token is in the server's log.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobView } from '../../../shared/http/answer-schemas';
import { postReviewForm } from '../../support/review-form';
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
import { killRunningOpflows, type OpflowProcess, runOpflow } from './opflow-process';
import { childEnv, startServe } from './serve-process';

const disclosure =
  'A folding bicycle helmet made of hinged shell segments that lock into a rigid dome with a magnetic latch, so the helmet folds flat for storage and meets impact standards when open.';
const linkSecret = 'review-link-secret-of-the-reminders-test-0123456789';
const hookSecret = `whsec_${Buffer.from('generic-webhook-secret-of-the-reminders').toString('base64')}`;

describe('reviewers: reminders until answered, and the timeout default (opflow serve)', {
  timeout: REAL_PROCESS_TIMEOUT_MS,
}, () => {
  let dir: string;
  let url: string;
  let env: NodeJS.ProcessEnv;
  let serve: OpflowProcess;
  let teams: Receiver<TeamsCard>;
  let hook: Receiver<VerifiedNotice>;
  let inbox: MailCatcher;

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as { job: JobView };
  };
  /** Polls until `what` holds; the test's time limit bounds the wait. */
  const until = async <T>(what: () => Promise<T | undefined> | T | undefined): Promise<T> => {
    for (;;) {
      const found = await what();
      if (found !== undefined && found !== false) return found;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const jobOf = async (id: string) => (await api('GET', `/jobs/${id}`)).job;
  const waitFor = (id: string, status: string) =>
    until(async () => {
      const job = await jobOf(id);
      return job.status === status ? job : undefined;
    });
  const create = async (tenant: string) => {
    const { job } = await api('POST', '/jobs', {
      workflow: 'novelty-check',
      input: { text: disclosure },
      tenant,
      label: `helmet for ${tenant}`,
      selection: { mode: 'manual' },
    });
    return waitFor(job.id, 'AWAITING_INPUT');
  };
  /** The rounds each channel received for a job: [teams, hook, mail]. */
  const roundsOf = (id: string) => ({
    teams: teams.taken
      .filter((card) => card.texts.some((text) => text.includes(id)))
      .map((card) => (card.texts[0]!.startsWith('Reminder: ') ? 'reminder' : 'first')),
    hook: hook.taken.filter((n) => n.payload.job.id === id).map((n) => n.payload.round),
    mail: inbox.taken
      .filter((mail) => mail.text.includes(id))
      .map((mail) => (mail.subject.startsWith('Reminder: ') ? 'reminder' : 'first')),
  });
  /**
   * Time passing, shown by a witness: a new job whose rule reminds it every second, waited for until
   * it has had `reminders` reminders after its first notice (so at least that many seconds passed,
   * every pass of the server meanwhile looking at every waiting job), then cancelled.
   */
  const witnessReminded = async (reminders: number) => {
    const witness = await create('witness');
    await until(() => roundsOf(witness.id).hook.length >= 1 + reminders);
    await api('POST', `/jobs/${witness.id}/cancel`);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opflow-e2e-reminders-'));
    [teams, hook, inbox] = await Promise.all([
      startTeamsReceiver(),
      startSignedReceiver(hookSecret),
      startMailCatcher(),
    ]);
    writeFileSync(
      join(dir, 'opflow.config.json'),
      JSON.stringify({
        reviewers: {
          checkEverySeconds: 1,
          channels: {
            teams: { type: 'teams' },
            hook: { type: 'webhook' },
            mail: { type: 'email', to: ['alice@example.com'], from: 'opflow@example.com' },
          },
          rules: [
            // Reminders every 2 s, more than any test waits for: they go on until answered.
            {
              name: 'until-answered',
              match: { tenant: 'legal' },
              notify: ['teams', 'hook', 'mail'],
              remind: { every: '2s', times: 20 },
            },
            // Two reminders only.
            { name: 'twice', match: { tenant: 'ops' }, notify: ['hook'], remind: { every: '1s', times: 2 } },
            // Reminders every 2 s; after 7 s every option is taken.
            {
              name: 'default',
              match: { tenant: 'night' },
              notify: ['hook', 'mail'],
              remind: { every: '2s', times: 20 },
              timeout: { after: '7s', answer: 'all' },
            },
            // The witness of time passing: reminded every second.
            {
              name: 'witness',
              match: { tenant: 'witness' },
              notify: ['hook'],
              remind: { every: '1s', times: 20 },
            },
          ],
        },
      }),
    );
    env = childEnv({
      OPFLOW_SANDBOX_SPEED: '300',
      OPFLOW_DB: join(dir, 'state', 'jobs.db'),
      OPFLOW_OUT: join(dir, 'reports'),
      OPFLOW_REVIEW_LINK_SECRET: linkSecret,
      OPFLOW_REVIEW_TEAMS_URL: `http://${teams.host}/workflows/teams-url-secret/invoke?sig=teams-sig-secret`,
      OPFLOW_REVIEW_HOOK_URL: `http://${hook.host}/notices/hook-url-secret`,
      OPFLOW_REVIEW_HOOK_SECRET: hookSecret,
      OPFLOW_SMTP_URL: inbox.url,
      OPFLOW_CALLBACK_ALLOW_HOSTS: `${teams.host},${hook.host}`,
    });
    ({ run: serve, url } = await startServe([], { env, cwd: dir }));
  });
  afterAll(async () => {
    killRunningOpflows();
    await Promise.all([teams?.close(), hook?.close(), inbox?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('reminds through each channel until answered, then sends nothing more', async () => {
    const job = await create('legal');
    // The first notice and two reminders, each through Teams, the signed webhook and mail.
    await until(
      () =>
        roundsOf(job.id).hook.length >= 3 &&
        roundsOf(job.id).mail.length >= 3 &&
        roundsOf(job.id).teams.length >= 3,
    );
    const rounds = roundsOf(job.id);
    expect(rounds.hook.slice(0, 3)).toEqual([1, 2, 3]);
    expect(rounds.teams.slice(0, 3)).toEqual(['first', 'reminder', 'reminder']);
    expect(rounds.mail.slice(0, 3)).toEqual(['first', 'reminder', 'reminder']);
    expect(teams.refused).toEqual([]);
    expect(hook.refused).toEqual([]);

    // The mailed link of the latest reminder answers.
    const reminder = inbox.taken.filter((mail) => mail.text.includes(job.id)).at(-1)!;
    const link = /(http:\/\/\S+\/review\/[\w.-]+)/.exec(reminder.text)![1]!;
    const chosen = [job.pending!.options[0]!.id];
    const answered = await postReviewForm(
      link,
      chosen.map((id): [string, string] => ['option', id]),
    );
    expect(await answered.text()).toContain('your answer is recorded');
    const done = await waitFor(job.id, 'SUCCEEDED');
    expect(done.answers).toEqual([
      expect.objectContaining({ via: 'link', by: 'alice@example.com', options: chosen }),
    ]);
    // A round claimed just before the answer may still be sending: once every round's deliveries
    // are recorded, what the channels hold is final. Each round went through each channel.
    const recorded = await until(async () => {
      const rounds = (await jobOf(job.id)).review?.rounds ?? [];
      return rounds.every((round) => round.deliveries.length === 3) &&
        roundsOf(job.id).hook.length === rounds.length
        ? rounds
        : undefined;
    });
    expect(recorded.length).toBeGreaterThanOrEqual(3);
    for (const round of recorded)
      expect(round.deliveries.map((d) => [d.channel, d.state]).sort()).toEqual([
        ['hook', 'sent'],
        ['mail', 'sent'],
        ['teams', 'sent'],
      ]);
    // While a witness is reminded four times (4 s at least: two of this job's intervals), this job
    // gets nothing more on any channel.
    const after = roundsOf(job.id);
    await witnessReminded(4);
    expect(roundsOf(job.id)).toEqual(after);
  });

  it("stops after the rule's reminders: the first notice and `times` reminders", async () => {
    const job = await create('ops');
    await until(() => roundsOf(job.id).hook.length >= 3);
    const waiting = await jobOf(job.id);
    expect(waiting.status).toBe('AWAITING_INPUT');
    expect(waiting.review).toMatchObject({ rule: 'twice', approvals: 1 });
    expect(waiting.review?.nextNoticeAt).toBeUndefined();
    // While a witness is reminded twice (2 s at least, two of this job's intervals): no fourth round.
    await witnessReminded(2);
    expect(roundsOf(job.id).hook).toEqual([1, 2, 3]);
    await api('POST', `/jobs/${job.id}/cancel`);
  });

  it('nobody answers: reminders until the timeout, then the default answer, recorded as such and shown by status', async () => {
    const job = await create('night');
    const all = job.pending!.options.map((option) => option.id).slice(0, job.pending!.max);
    const done = await waitFor(job.id, 'SUCCEEDED');
    expect(done.answers).toEqual([expect.objectContaining({ via: 'timeout', options: all })]);
    expect(done.answers?.[0]?.by).toBeUndefined();
    expect(done.selections.features).toEqual(all);
    // Reminded (every 2 s) while it waited 7 s: the first notice and at least two reminders.
    const rounds = roundsOf(job.id);
    expect(rounds.hook.length).toBeGreaterThanOrEqual(3);
    expect(rounds.mail.length).toBe(rounds.hook.length);
    // The notices said when and what the default is.
    const first = hook.taken.find((n) => n.payload.job.id === job.id)!.payload;
    const labelled = job
      .pending!.options.slice(0, job.pending!.max)
      .map((option) => `${option.label} (${option.id})`)
      .join(', ');
    expect(first.timeout).toMatchObject({ answer: `every option is taken: ${labelled}`, options: all });
    expect(Date.parse(first.timeout!.at)).toBe(Date.parse(job.pending!.offeredAt) + 7_000);
    // Once answered, each channel is told the default was taken (once, no link), recorded as its
    // own round; then no more reminders (while a witness is reminded twice).
    await until(async () => {
      const seen = await jobOf(job.id);
      const rounds = seen.review?.rounds ?? [];
      const told = seen.selectionRounds?.[0]?.notices?.some(
        (notice) => notice.label === 'notice of the default taken' && notice.deliveries.length === 2,
      );
      return (
        told &&
        rounds.every((round) => round.deliveries.length === 2) &&
        roundsOf(job.id).hook.length === rounds.length
      );
    });
    const defaulted = hook.taken.filter(
      (n) => n.payload.job.id === job.id && n.payload.type === 'selection.defaulted',
    );
    expect(defaulted).toHaveLength(1);
    expect(defaulted[0]!.payload).toMatchObject({ answer: { options: all }, after: '7s' });
    expect(defaulted[0]!.payload.link).toBeUndefined();
    const told = inbox.taken.filter((mail) => mail.text.includes(job.id) && !/\/review\//.test(mail.text));
    expect(told.map((mail) => mail.subject)).toEqual([
      'helmet for night: nobody answered in time; the default answer was taken',
    ]);
    expect(told[0]!.text).toContain(`The default answer ${labelled} was taken at `);
    const after = roundsOf(job.id);
    await witnessReminded(2);
    expect(roundsOf(job.id)).toEqual(after);

    // `opflow status` shows the answer as the timeout's default: each option's label, its id beside it.
    const status = await runOpflow(['status', job.id], { env, cwd: dir });
    expect(status.code).toBe(0);
    const choice = labelled.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(status.stdout).toMatch(new RegExp(`answered  ${choice} at \\S+ via timeout`));
    // Its rounds line names the configured default the same way.
    expect(status.stdout).toMatch(new RegExp(`; default ${choice} at \\S+`));
    expect(status.stdout).toContain(', notice of the default taken; default ');
  });

  it('logs no secret: no channel URL, signing secret, SMTP password or link token', () => {
    const log = serve.stderrSoFar();
    expect(log).toContain('/review/…');
    for (const secret of [
      'teams-url-secret',
      'teams-sig-secret',
      'hook-url-secret',
      hookSecret.slice('whsec_'.length),
      smtpPassword,
      linkSecret,
    ])
      expect(log).not.toContain(secret);
    expect(log).not.toMatch(/\/review\/[\w-]{20,}/);
  });
});
