/** Download links in memory: long-expired links and the documents behind them are forgotten. */
import { describe, expect, it } from 'vitest';
import { DownloadLinks, type PublishedDocument } from '../../../shared/sandbox/download-links';

const TTL_MS = 1_000;

function setup() {
  const clock = { now: 0 };
  let renders = 0;
  const links = new DownloadLinks({
    ttlMs: TTL_MS,
    now: () => clock.now,
    baseUrl: () => 'http://sandbox',
    render: (document) => {
      renders += 1;
      return new TextEncoder().encode(`${document.fileName} #${renders}`);
    },
  });
  const document = (name: string) => (): PublishedDocument => ({
    fileName: name,
    format: 'html',
    outline: { title: name, sections: [] },
  });
  const open = (url: string) => {
    const [, token = '', name = ''] = new URL(url).pathname.split('/').slice(1);
    return links.open(token, decodeURIComponent(name));
  };
  return { clock, links, document, open, renders: () => renders };
}

describe('DownloadLinks', () => {
  it('keeps an expired link answering "expired" until it has been expired for another TTL', async () => {
    const { clock, links, document, open } = setup();
    const old = links.publish('old', document('old.txt'));
    expect((await open(old)).kind).toBe('ok');
    clock.now = 1_500;
    expect((await open(old)).kind).toBe('expired');
    for (let index = 0; index < 1_100; index++) links.publish(`doc-${index}`, document(`d${index}.txt`));
    expect((await open(old)).kind).toBe('expired'); // expired for less than another TTL: kept
    clock.now = 2_000;
    for (let index = 0; index < 1_100; index++) links.publish(`doc-${index}`, document(`d${index}.txt`));
    expect((await open(old)).kind).toBe('missing');
    expect(links.kept.links).toBeLessThan(2_201);
  });

  it('forgets rendered documents no live link points at, and renders them again when published again', async () => {
    const { clock, links, document, open, renders } = setup();
    const first = await open(links.publish('report', document('report.txt')));
    expect(first.kind === 'ok' && new TextDecoder().decode(first.body)).toBe('report.txt #1');
    clock.now = 10_000;
    // The 1024th link starts a sweep: "report" has no live link any more.
    for (let index = 0; index < 1_024; index++) links.publish(`other-${index}`, document(`o${index}.txt`));
    expect(links.kept.documents).toBe(1_024);
    const again = await open(links.publish('report', document('report.txt')));
    expect(again.kind === 'ok' && new TextDecoder().decode(again.body)).toBe(`report.txt #${renders()}`);
    expect(renders()).toBe(2);
  });
});
