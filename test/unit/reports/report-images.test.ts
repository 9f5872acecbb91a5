// Images result.json held as base64 are found by their first bytes, wherever they are, and replaced
// by the name of a file; equal images share one file; anything else is left as it was.
import { describe, expect, it } from 'vitest';
import {
  imageMarkdown,
  imagesAsFiles,
  ReportImageFiles,
  reportWithImageFiles,
} from '../../../shared/reports/report-images';
import { pngImage, tinyPng } from '../../support/images';

const png = tinyPng();
const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(80, 7)]);
const gif = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(80, 1)]);

describe('imagesAsFiles', () => {
  it('replaces each base64 image by its file, numbered in order, the same image kept once', () => {
    const result = {
      title: 'front.png',
      input: {
        images: [{ data: png.toString('base64'), name: 'front.png' }, { url: 'https://x.test/a.png' }],
      },
      steps: {
        'image-1-result': {
          task_status: 2,
          line_drawing_base64: `data:image/jpeg;base64,${jpeg.toString('base64')}`,
        },
        'image-2-result': { line_drawing_base64: `data:image/jpeg;base64,${jpeg.toString('base64')}` },
        'image-3-result': { drawing: gif.toString('base64') },
      },
    };
    const { result: kept, files, images } = imagesAsFiles(result);
    expect(images).toEqual([
      { file: 'images/1.png', contentType: 'image/png', bytes: png.byteLength, at: ['input.images[0].data'] },
      {
        file: 'images/2.jpg',
        contentType: 'image/jpeg',
        bytes: jpeg.byteLength,
        at: ['steps.image-1-result.line_drawing_base64', 'steps.image-2-result.line_drawing_base64'],
      },
      {
        file: 'images/3.gif',
        contentType: 'image/gif',
        bytes: gif.byteLength,
        at: ['steps.image-3-result.drawing'],
      },
    ]);
    expect(files.map((file) => [file.name, file.contentType])).toEqual([
      ['images/1.png', 'image/png'],
      ['images/2.jpg', 'image/jpeg'],
      ['images/3.gif', 'image/gif'],
    ]);
    expect(Buffer.from(files[0]!.body).equals(png)).toBe(true);
    expect(Buffer.from(files[1]!.body).equals(jpeg)).toBe(true);
    expect(kept).toEqual({
      title: 'front.png',
      input: { images: [{ data: 'images/1.png', name: 'front.png' }, { url: 'https://x.test/a.png' }] },
      steps: {
        'image-1-result': { task_status: 2, line_drawing_base64: 'images/2.jpg' },
        'image-2-result': { line_drawing_base64: 'images/2.jpg' },
        'image-3-result': { drawing: 'images/3.gif' },
      },
    });
    // The original is not changed.
    expect(result.steps['image-1-result'].line_drawing_base64).toMatch(/^data:image\/jpeg;base64,/);
  });

  it('leaves text, short strings and base64 that is no image as they were', () => {
    const result = {
      summary: 'A long sentence about a swim ring that is not base64 at all, with spaces and words in it.',
      token: 'QUJD',
      pdf: Buffer.concat([Buffer.from('%PDF-1.7'), Buffer.alloc(90, 3)]).toString('base64'),
      notBase64: `data:image/png;base64,${'*'.repeat(100)}`,
      count: 3,
      none: null,
    };
    const { result: kept, files, images } = imagesAsFiles(result);
    expect(kept).toEqual(result);
    expect(files).toEqual([]);
    expect(images).toEqual([]);
  });
});

describe('images a report shows', () => {
  const photo = pngImage(40, 30, [10, 120, 200]);

  it('are written as data in the Markdown, escaping the alt text; a string that is no image gives none', () => {
    const image = imageMarkdown('front [v2].png', photo.toString('base64'));
    expect(image?.markdown).toBe(`![front \\[v2\\].png](data:image/png;base64,${photo.toString('base64')})`);
    expect(imageMarkdown('x', 'not an image at all, only words and spaces in a long sentence')).toBe(
      undefined,
    );
  });

  it('link their files in report.md and stay in the page for report.html, numbered after result.json', () => {
    const kept = new ReportImageFiles();
    kept.replaceIn({ input: { images: [{ data: png.toString('base64') }] } });
    const markdown = `| a | b |\n| --- | --- |\n| ${imageMarkdown('front [v2].png', photo.toString('base64'))!.markdown} | ${imageMarkdown('again', png.toString('base64'))!.markdown} |\n`;
    const { markdown: file, page } = reportWithImageFiles(markdown, kept);
    expect(file).toBe(
      '| a | b |\n| --- | --- |\n| ![front \\[v2\\].png](images/2.png) | ![again](images/1.png) |\n',
    );
    expect(page).toBe(markdown);
    expect(kept.images.map((image) => image.file)).toEqual(['images/1.png', 'images/2.png']);
    expect(Buffer.from(kept.files[1]!.body).equals(photo)).toBe(true);
  });

  it('are linked to their files in the page past the size limits, with their size said', () => {
    const kept = new ReportImageFiles();
    const big = pngImage(64, 64, [0, 0, 0], true);
    const markdown = `${imageMarkdown('small', png.toString('base64'))!.markdown}\n\n${imageMarkdown('big', big.toString('base64'))!.markdown}\n`;
    const { page } = reportWithImageFiles(markdown, kept, { eachBytes: 4096, totalBytes: 1 << 20 });
    expect(page).toContain(`![small](data:image/png;base64,${png.toString('base64')})`);
    expect(page).toContain(
      `[big (${Math.round(big.byteLength / 1024)} KB, too large to show in the page: the file images/2.png beside the report)](images/2.png)`,
    );
    const both = reportWithImageFiles(markdown, new ReportImageFiles(), {
      eachBytes: 1 << 20,
      totalBytes: png.byteLength + 10,
    }).page;
    expect(both).toContain('![small](data:');
    expect(both).toContain('too large to show in the page');
  });
});
