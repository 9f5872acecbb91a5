import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callSequence, lastSeq, startWorld, type World } from './world';

/** A real PNG (48x48, an outlined shape), as a product photo would be sent. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAADAAAAAwCAAAAAByaaZbAAAAq0lEQVR42u2WSw6AMAhE5/6XxpgaU8oMLS4aF2WlhIf8SoUVBQd4tU1WgWYsEFD78JQBvRUhoOKHyAPK3gQBlq9+H4DHs9PY6CKkOwJD6gjlIVVyqlhC0oeOACk56XTnxEWrZykAYtRIwOwDnHAAFgB4YH5y9gJYArAT+GGV6p0uz1J9Wm0KJCfO0vVpKwQ70xnBt4Ym1F4yozdCsvkYku/WD9s7XBDnT+CWC0dz1oyW+a8bAAAAAElFTkSuQmCC',
  'base64',
);

describe('design infringement workflows against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('design-infringement-search: uploads an image given as data, searches it, and leads the report with the risk', async () => {
    const before = lastSeq(world);
    const job = await world.run('design-infringement-search', {
      images: [{ data: PNG.toString('base64'), name: 'swim-ring.png' }],
      countries: ['US', 'EU', 'CN'],
      field: 'inflatable swim ring',
      filedFrom: '2020-01-01',
    });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(['p010', 'ai39-1', 'ai39-2']);
    const { markdown, result } = await world.report(job.id);
    const order = [
      '## Risk conclusion',
      '## Closest registered designs',
      '## Other designs the image search found',
      '## What was searched',
    ];
    const at = order.map((title) => markdown.indexOf(`\n${title}\n`));
    expect(
      at.every((index) => index > 0),
      markdown,
    ).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(markdown).toMatch(/\n(High|Medium|Low) risk/);
    expect(markdown).toMatch(/\| 1 \| \[(USD|EU|CN)\w+\]\(https:\/\/worldwide\.espacenet\.com/);
    expect(markdown).toMatch(/\| (Valid|Invalid|Pending) \| \d+% \|/);
    expect(markdown).toContain('swim-ring.png (PNG, 1 KB, uploaded)');
    // The image's bytes stay out of the report and its summary.
    const base64 = PNG.toString('base64').slice(0, 40);
    expect(markdown).not.toContain(base64);
    expect(result.summary).toMatch(/^(High|Medium|Low) risk/);
    // result.json names the images (the product's, the line drawing the platform echoes) instead of
    // holding their base64: each is a file beside the report, listed among the job's report files.
    expect(JSON.stringify(result)).not.toContain(base64);
    const kept = result as unknown as {
      input: { images: unknown[] };
      steps: Record<string, { line_drawing_base64?: string }>;
      images: unknown[];
    };
    expect(kept.input.images[0]).toEqual({ data: 'images/1.png', name: 'swim-ring.png' });
    expect(kept.steps['image-1-result']?.line_drawing_base64).toMatch(/^images\/\d\.png$/);
    expect(kept.images[0]).toMatchObject({ file: 'images/1.png', contentType: 'image/png' });
    expect(job.outputs).toContain(`reports/${job.id}/images/1.png`);
  }, 120_000);

  it('design-infringement-search: searches each image in turn, URLs without an upload', async () => {
    const before = lastSeq(world);
    const job = await world.run('design-infringement-search', {
      images: [
        { url: 'https://example.com/products/front.png' },
        { data: `data:image/png;base64,${PNG.toString('base64')}`, name: 'side.png' },
      ],
    });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(['ai39-1', 'ai39-2', 'p010', 'ai39-1', 'ai39-2']);
    const { markdown } = await world.report(job.id);
    expect(markdown).toContain('| Found from |');
    expect(markdown).toContain('front.png (by URL: https://example.com/products/front.png)');
  }, 120_000);

  it('design-infringement-1v1: compares the product with one design view by view, conclusion first', async () => {
    const before = lastSeq(world);
    const job = await world.run('design-infringement-1v1', {
      image: { data: PNG.toString('base64'), name: 'unicorn-float.png' },
      patent: 'eu 004035624-0003 s',
    });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(['p010', 'ai67-1', 'ai67-2']);
    const { markdown, result } = await world.report(job.id);
    expect(markdown.split('\n')[0]).toBe('# Design comparison: unicorn-float.png vs EU0040356240003S');
    const order = ['## Conclusion', '## View by view', '### View 1:', '## What was compared'];
    const at = order.map((title) => markdown.indexOf(`\n${title}`));
    expect(
      at.every((index) => index > 0),
      markdown,
    ).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(markdown).toMatch(/\| 1 \| \d+% \| (High|Medium|Low) \| \[view 1\]\(https:/);
    expect(result.summary).toMatch(/^(High|Medium|Low) risk vs EU0040356240003S: up to \d+% similar/);
  }, 120_000);

  it('fails with the upstream status when the search fails upstream', async () => {
    const job = await world.run('design-infringement-search', {
      images: [{ url: 'https://example.com/a.png' }],
      field: 'lamp [sandbox:fail]',
    });
    expect(job.status).toBe('FAILED');
    expect(job.lastError?.message).toContain('the design search failed upstream (status 3)');
  }, 60_000);

  it('refuses a bad image before any call, naming the image and what is wrong', async () => {
    const { workflows } = await import('../../../shared/workflows');
    const search = workflows.get('design-infringement-search')!.input;
    const gif = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1').toString('base64');
    const big = Buffer.concat([PNG, Buffer.alloc(4200 * 1024)]).toString('base64');
    for (const [value, message] of [
      [{ images: [] }, 'images: at least one product image'],
      [
        { images: [{ data: gif, name: 'logo.gif' }] },
        'image (logo.gif): not a PNG or JPEG image (by its first bytes it is a GIF image)',
      ],
      [
        { images: [{ data: big, name: 'huge.png' }] },
        "image (huge.png): the image is 4.1 MB, over the platform's limit of 4,096 KB",
      ],
      [{ images: [{ data: 'not base64!', name: 'x.png' }] }, 'image (x.png): data is not base64 text'],
      [{ images: [{ url: 'ftp://example.com/a.png' }] }, 'url: an http(s) URL'],
      [{ images: [{ url: 'https://example.com/a.png', data: gif }] }, 'give either url'],
      [
        { images: [{ url: 'https://example.com/a.png' }], countries: ['USA'] },
        'countries: two-letter office codes',
      ],
      [{ images: [{ url: 'https://example.com/a.png' }], locarno: ['14'] }, 'locarno: classes such as'],
      [{ images: [{ url: 'https://example.com/a.png' }], filedFrom: '2020-13-01' }, 'filedFrom: a date'],
    ] as const) {
      const parsed = search.safeParse(value);
      expect(parsed.success, JSON.stringify(value).slice(0, 80)).toBe(false);
      expect(JSON.stringify(parsed.error?.issues)).toContain(message.replace(/"/g, '\\"'));
    }
    const oneToOne = workflows.get('design-infringement-1v1')!.input;
    const parsed = oneToOne.safeParse({ image: { url: 'https://example.com/a.png' } });
    expect(JSON.stringify(parsed.error?.issues)).toContain(
      'patent: the registered design to compare with is required',
    );
  });
});
