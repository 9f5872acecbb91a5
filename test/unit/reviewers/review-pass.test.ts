import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { submitJob } from '../../../shared/engine';
import { reviewersConfigSchema } from '../../../shared/reviewers/review-config';
import { reviewPass } from '../../../shared/reviewers/review-pass';
import { envReviewerSecrets } from '../../../shared/reviewers/reviewer-secrets';
import { drive } from '../../support/memory-ports';
import { harness } from '../engine/fixtures';

describe('the reviewers pass', () => {
  it('sends one round per job to a channel and records it; a second pass sends nothing more', async () => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const h = harness();
      const { job } = await submitJob(h.deps, {
        workflow: 'demo',
        input: { issue: 'x' },
        selection: { mode: 'manual' },
      });
      await drive(h.deps, h.queue, h.clock);
      const config = reviewersConfigSchema.parse({
        channels: { slack: { type: 'slack' } },
        rules: [{ name: 'all', notify: ['slack'] }],
      });
      const deps = {
        ...h.deps,
        config,
        secrets: envReviewerSecrets({
          OPFLOW_REVIEW_LINK_SECRET: 'a-link-secret-of-at-least-24-bytes',
          OPFLOW_REVIEW_SLACK_URL: `http://127.0.0.1:${port}/hook`,
        }),
        publicUrl: 'http://opflow.test',
        policy: { allowHosts: [`127.0.0.1:${port}`] },
      };
      // A pass whose time budget is already spent looks at nothing, and says so.
      expect(await reviewPass(deps, { until: h.clock.now() })).toEqual({
        rounds: 0,
        failedDeliveries: 0,
        timedOut: 0,
        outOfTime: true,
      });
      expect(bodies).toHaveLength(0);
      const first = await reviewPass(deps, { until: h.clock.now() + 30_000 });
      expect(first).toEqual({ rounds: 1, failedDeliveries: 0, timedOut: 0, outOfTime: false });
      expect(await reviewPass(deps)).toEqual({
        rounds: 0,
        failedDeliveries: 0,
        timedOut: 0,
        outOfTime: false,
      });
      expect(bodies).toHaveLength(1);
      expect(JSON.parse(bodies[0]!).text).toContain('http://opflow.test/review/');
      const stored = (await h.store.get(job.id))!;
      expect(stored.review?.rounds[0]?.deliveries).toMatchObject([
        { channel: 'slack', state: 'sent', attempts: 1 },
      ]);
    } finally {
      server.close();
    }
  });
});
