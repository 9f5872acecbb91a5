import { describe, expect, it } from 'vitest';
import {
  mailMessage,
  type Notice,
  slackMessage,
  teamsMessage,
  webhookNotice,
} from '../../../shared/reviewers/render';
import { ReviewLinkError, signReviewLink, verifyReviewLink } from '../../../shared/reviewers/review-link';

const key = Buffer.from('a-link-secret-of-at-least-24-bytes');
const claims = {
  jobId: '01J0',
  step: 'features',
  offeredAt: 1_750_000_000_000,
  recipient: 'alice@example.com',
  expiresAt: 1_750_000_600_000,
};
const problemOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof ReviewLinkError ? error.problem : 'other';
  }
  return 'none';
};

describe('review links', () => {
  it('verifies its own token until it expires, and says when', () => {
    const token = signReviewLink(claims, key);
    expect(verifyReviewLink(token, key, claims.expiresAt - 1)).toEqual(claims);
    expect(problemOf(() => verifyReviewLink(token, key, claims.expiresAt))).toBe('expired');
    expect(() => verifyReviewLink(token, key, claims.expiresAt)).toThrow(/expired on 2025-/);
  });

  it('refuses a changed payload, a changed signature, another key and a damaged token', () => {
    const token = signReviewLink(claims, key);
    const [payload, signature] = token.split('.') as [string, string];
    const other = signReviewLink({ ...claims, jobId: '01J1' }, key).split('.')[0]!;
    expect(problemOf(() => verifyReviewLink(`${other}.${signature}`, key, 0))).toBe('tampered');
    expect(problemOf(() => verifyReviewLink(`${payload}.${signature.slice(0, -2)}AA`, key, 0))).toBe(
      'tampered',
    );
    expect(problemOf(() => verifyReviewLink(token, Buffer.from('another-key-of-at-least-24-bytes'), 0))).toBe(
      'tampered',
    );
    // The last character of a 32-byte signature carries 4 bits and 2 unused ones: a link whose last
    // character differs only in those decodes to the same bytes, and is refused all the same.
    const last = signature.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = alphabet[alphabet.indexOf(last) ^ 1]!;
    expect(Buffer.from(`${signature.slice(0, -1)}${twin}`, 'base64url')).toEqual(
      Buffer.from(signature, 'base64url'),
    );
    expect(problemOf(() => verifyReviewLink(`${payload}.${signature.slice(0, -1)}${twin}`, key, 0))).toBe(
      'tampered',
    );
    expect(problemOf(() => verifyReviewLink(payload, key, 0))).toBe('malformed');
    expect(problemOf(() => verifyReviewLink(`${payload}.${signature}.x`, key, 0))).toBe('malformed');
  });
});

describe('notices per channel', () => {
  const notice: Notice = {
    jobId: '01J0',
    workflow: 'novelty-check',
    tenant: 'legal',
    label: 'helmet <b>&</b>',
    prompt: 'Which features?',
    options: [
      { id: 'f1', label: 'folding <shell>', preselected: true },
      { id: 'f2', label: 'latch', detail: 'magnetic', preselected: false },
    ],
    min: 1,
    max: 2,
    round: 2,
    link: 'https://opflow.example/review/abc.def',
    linkExpiresAt: 1_750_000_600_000,
    timeout: {
      at: 1_750_000_900_000,
      answer: 'the suggested options are taken: folding <shell> (f1)',
      options: ['f1'],
    },
    approvals: 2,
    firstApproval: { by: 'alice_b@example.com', options: ['f1'], labels: ['folding <shell>'] },
  };
  it('Slack: escaped mrkdwn and a button to the link', () => {
    const message = slackMessage(notice) as {
      text: string;
      blocks: { type: string; elements?: { url: string }[] }[];
    };
    expect(message.text).toContain('Reminder: helmet &lt;b&gt;&amp;&lt;/b&gt; waits for your selection');
    expect(JSON.stringify(message.blocks)).toContain('folding &lt;shell&gt; (f1), suggested');
    expect(JSON.stringify(message.blocks)).toContain(
      'alice_b@example.com chose folding &lt;shell&gt; (f1); a second person must confirm.',
    );
    expect(message.blocks.at(-1)!.elements![0]!.url).toBe(notice.link);
  });
  it('Teams: an Adaptive Card with the options and an Open URL action', () => {
    const card = (
      teamsMessage(notice) as { attachments: { content: { body: unknown[]; actions: unknown[] } }[] }
    ).attachments[0]!.content;
    expect(card.actions).toEqual([{ type: 'Action.OpenUrl', title: 'Review and answer', url: notice.link }]);
    expect(JSON.stringify(card.body)).toContain(
      'alice\\\\_b@example.com chose folding &lt;shell> (f1); a second person must confirm.',
    );
  });
  it('mail: subject, text and escaped HTML with the link', () => {
    const mail = mailMessage(notice);
    expect(mail.subject).toBe('Reminder: helmet <b>&</b> waits for your selection');
    expect(mail.text).toContain(`Review and answer: ${notice.link}`);
    expect(mail.text).toContain(', the suggested options are taken: folding <shell> (f1).');
    expect(mail.text).toContain('- folding <shell> (f1), suggested\n- latch (f2) - magnetic');
    expect(mail.html).toContain('<li>folding &lt;shell&gt; (f1), suggested</li>');
    expect(mail.html).toContain('helmet &lt;b&gt;&amp;&lt;/b&gt;');
    expect(mail.html).toContain(`<a href="${notice.link}">`);
  });
  it('generic webhook: the job, the options and the link with its expiry', () => {
    expect(webhookNotice(notice)).toMatchObject({
      type: 'selection.awaiting',
      round: 2,
      job: { id: '01J0', workflow: 'novelty-check', tenant: 'legal' },
      link: { url: notice.link, expiresAt: '2025-06-15T15:16:40.000Z' },
      firstApproval: { by: 'alice_b@example.com', options: ['f1'] },
      timeout: { answer: 'the suggested options are taken: folding <shell> (f1)', options: ['f1'] },
    });
  });
});
