// The reviewer's confirmation page (shared/reviewers/confirmation-page.ts) as a second approver and a
// hurried reviewer meet it: the first approver's options come ticked, a refused form keeps the name
// typed in it, and a closed question says where the job is in words, never as a status code.
import { describe, expect, it } from 'vitest';
import { answerSelection } from '../../../shared/engine/job-commands';
import { answerReviewPage } from '../../../shared/reviewers/confirmation-page';
import { reviewPass } from '../../../shared/reviewers/review-pass';
import { reviewFormOf } from '../../support/review-form';
import { withReceiver } from './receiver-world';

/** Whether the page's option `id` is ticked. */
const ticked = (html: string, id: string) =>
  new RegExp(`<input type="checkbox" name="option" id="option-\\d+" value="${id}" checked>`).test(html);

describe('the confirmation page', () => {
  it('ticks the first approver’s options for the second, keeps a refused name, and says a closed job’s state in words', async () => {
    await withReceiver(async ({ host, bodies, job, h, passDeps }) => {
      const deps = passDeps(
        { channels: { room: { type: 'slack' } }, rules: [{ name: 'pair', notify: ['room'], approvers: 2 }] },
        { OPFLOW_REVIEW_ROOM_URL: `http://${host}/hook` },
      );
      expect((await reviewPass(deps)).rounds).toBe(1);
      const token = /http:\/\/opflow\.test\/review\/([\w.-]+)/.exec(bodies()[0]!)![1]!;
      const key = await deps.secrets.linkKey();
      const page = (method: string, extra: { body?: string; cookie?: string } = {}) =>
        answerReviewPage(h.deps, key, { method, token, ...extra });
      const post = async (fields: [string, string][]) => {
        const opened = await page('GET');
        const form = reviewFormOf(String(opened.headers['set-cookie']), opened.body);
        return page('POST', {
          body: new URLSearchParams([...fields, ['form', form.field]]).toString(),
          cookie: form.cookie,
        });
      };
      // Nothing suggested: nothing ticked.
      const opened = await page('GET');
      expect(['r1', 'r2', 'r3'].filter((id) => ticked(opened.body, id))).toEqual([]);

      // No option chosen: refused, and the name typed is still in its field.
      const refused = await post([['by', 'Alice <alice@example.com>']]);
      expect(refused.status).toBe(400);
      expect(refused.body).toContain('value="Alice &lt;alice@example.com&gt;"');

      // alice approves r2; the second approver's page comes with r2 ticked, to confirm.
      expect(
        (
          await post([
            ['option', 'r2'],
            ['by', 'alice'],
          ])
        ).status,
      ).toBe(200);
      const second = await page('GET');
      expect(second.body).toContain('alice chose beta (r2). A second person must confirm the same choice.');
      expect(['r1', 'r2', 'r3'].filter((id) => ticked(second.body, id))).toEqual(['r2']);

      // bob confirms through the API: the link's question is closed, and the page says so in words.
      await answerSelection(h.deps, job.id, ['r2'], { via: 'api', by: 'bob' });
      const closed = await page('GET');
      expect(closed.status).toBe(409);
      expect(closed.body).toContain('no longer waits for this selection: it has gone on.');
      expect(closed.body).not.toMatch(/QUEUED|RUNNING|WAITING|AWAITING_INPUT/);
      expect(closed.body).toContain('It was answered by bob via api');
    });
  });
});
