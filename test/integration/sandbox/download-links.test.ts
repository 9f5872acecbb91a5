/**
 * Download links over real HTTP: opaque tokens without the key, expiry by the sandbox clock (403
 * like S3), fresh links on the next poll, and 404 for links that never existed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SANDBOX_API_KEY } from '../../../shared/sandbox';
import { startTestSandbox, type TestSandbox } from './sandbox-harness';

const TTL_MS = 60_000;
let harness: TestSandbox;
beforeEach(async () => {
  harness = await startTestSandbox({
    linkTtlMs: TTL_MS,
    defaultTaskDuration: { meanMs: 1_000, spreadMs: 0 },
  });
});
afterEach(() => harness.close());

async function finishedDisclosureLink(
  via: 'header' | 'query' = 'header',
): Promise<{ job_id: string; url: string }> {
  const { job_id } = await harness.ok(
    'ai32-2',
    { language: 'en', mechanism: 'Optics', tech_solution: 'A lens. A mount.' },
    { via },
  );
  harness.advance(1_000);
  const { download_url } = await harness.ok('ai32-3', { job_id }, { via });
  return { job_id, url: download_url };
}

describe('download links', () => {
  it('never carry the API key, whichever way the key was sent', async () => {
    for (const via of ['header', 'query'] as const) {
      const { url } = await finishedDisclosureLink(via);
      expect(url).not.toContain(SANDBOX_API_KEY);
      expect(url).not.toContain('apikey');
      expect(new URL(url).pathname).toMatch(/^\/files\/[A-Za-z0-9_-]{24}\/disclosure-[0-9a-f]{8}\.docx$/);
    }
  });

  it('expire after linkTtlMs by the sandbox clock with 403, while a new poll hands out a fresh link', async () => {
    const { job_id, url } = await finishedDisclosureLink();
    harness.advance(TTL_MS - 1);
    const valid = await harness.get(url);
    expect(valid.status).toBe(200);
    expect(valid.headers['content-disposition']).toContain('disclosure-');
    harness.advance(1);
    const expired = await harness.get(url);
    expect(expired.status).toBe(403);
    expect(expired.body.toString('utf8')).toContain('<Code>AccessDenied</Code>');

    const { download_url } = await harness.ok('ai32-3', { job_id });
    expect(download_url).not.toBe(url);
    const fresh = await harness.get(download_url);
    expect(fresh.status).toBe(200);
    expect(fresh.body.equals(valid.body)).toBe(true);
  });

  it('answer 404 for unknown tokens or a wrong file name', async () => {
    const { url } = await finishedDisclosureLink();
    expect((await harness.get(`${harness.sandbox.url}/files/not-a-token/x.docx`)).status).toBe(404);
    expect((await harness.get(url.replace(/[^/]+$/, 'other.docx'))).status).toBe(404);
    expect(harness.sandbox.ledger.count({ operationId: 'download', httpStatus: 404 })).toBe(2);
  });
});
