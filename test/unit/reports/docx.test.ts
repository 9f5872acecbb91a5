/**
 * report.docx from a report's Markdown, read back by another library (mammoth, not the `docx`
 * package that wrote it): headings, paragraphs, quotes, lists and every table with its cells, links
 * kept only to web pages and files beside the report, raw HTML kept as text.
 */
import mammoth from 'mammoth';
import { describe, expect, it } from 'vitest';
import { markdownToDocx } from '../../../shared/reports/docx';
import { pngImage } from '../../support/images';

const markdown = `# Novelty check: Heat-pump dryer

> **Sandbox data: not real publications.** This job ran against opflow's built-in sandbox.

## Conclusion

**Anticipated: D1 (CN805715735B) alone discloses every compared feature.**

- Anticipated by a single document (D1): f1
- Not found: none
  - nested point

1. first
2. second

| Id | Feature | D1 (X) | D2 (A) |
| --- | --- | --- | --- |
| f1 | A tumble dryer & its *heat pump* | ● 86 | ◐ 74 |
| f2 | [CN805715735B](https://worldwide.espacenet.com/patent/search?q=pn%3DCN805715735B) | ○ 52 | — |

[the platform's report](attachments/report.pdf) · [bad](javascript:alert(1)) · [local](file:///etc/passwd)

<script>alert("x")</script>
`;

describe('markdownToDocx', () => {
  it('writes a Word file another reader reads: text, tables and safe links', async () => {
    const bytes = await markdownToDocx(markdown, 'Novelty check: Heat-pump dryer');
    expect(Buffer.from(bytes.slice(0, 2)).toString()).toBe('PK');
    const buffer = Buffer.from(bytes);
    const { value: text } = await mammoth.extractRawText({ buffer });
    expect(text).toContain('Novelty check: Heat-pump dryer');
    expect(text).toContain('Sandbox data: not real publications.');
    expect(text).toContain('Anticipated: D1 (CN805715735B) alone discloses every compared feature.');
    expect(text).toContain('nested point');
    expect(text).toContain('<script>alert("x")</script>');
    const { value: html } = await mammoth.convertToHtml({ buffer });
    expect(html).toContain('<h1>Novelty check: Heat-pump dryer</h1>');
    expect(html).toContain('<h2>Conclusion</h2>');
    const rows = [...html.matchAll(/<tr>(.*?)<\/tr>/g)].map((row) =>
      [...(row[1] as string).matchAll(/<t[hd]>(.*?)<\/t[hd]>/g)].map((cell) =>
        (cell[1] as string).replace(/<[^>]+>/g, ''),
      ),
    );
    expect(rows).toEqual([
      ['Id', 'Feature', 'D1 (X)', 'D2 (A)'],
      ['f1', 'A tumble dryer &amp; its heat pump', '● 86', '◐ 74'],
      ['f2', 'CN805715735B', '○ 52', '—'],
    ]);
    expect(html).toContain('<a href="https://worldwide.espacenet.com/patent/search?q=pn%3DCN805715735B">');
    expect(html).toContain('<a href="attachments/report.pdf">');
    expect(html).not.toContain('javascript:');
    expect(html).not.toContain('file:');
    expect(html).toMatch(/<ul><li>Anticipated by a single document/);
    expect(html).toMatch(/<ol><li>first<\/li><li>second<\/li><\/ol>/);
  });

  it('turns the pages to landscape for a table wider than a portrait page holds', async () => {
    const wide = `| ${Array.from({ length: 10 }, (_, i) => `c${i}`).join(' | ')} |\n|${' --- |'.repeat(10)}\n| ${Array.from({ length: 10 }, (_, i) => `v${i}`).join(' | ')} |\n`;
    const JSZip = (await import('jszip')).default;
    const portrait = await JSZip.loadAsync(await markdownToDocx('# Narrow\n\ntext\n', 'Narrow'));
    const landscape = await JSZip.loadAsync(await markdownToDocx(`# Wide\n\n${wide}`, 'Wide'));
    expect(await portrait.file('word/document.xml')?.async('string')).not.toContain('w:orient="landscape"');
    expect(await landscape.file('word/document.xml')?.async('string')).toContain('w:orient="landscape"');
  });

  it('places the images of the report that are files beside it as pictures, fitted to the page or the cell', async () => {
    const drawing = pngImage(1200, 300, [0, 0, 0]);
    const photo = pngImage(48, 32, [40, 140, 220]);
    const markdown = `# Design search\n\n![Line drawing](images/2.png)\n\n| Image | As searched |\n| --- | --- |\n| front.png | ![front.png](images/1.png) |\n| side.png | ![side.png](images/9.png) |\n`;
    const bytes = await markdownToDocx(markdown, 'Design search', [
      { name: 'images/1.png', body: new Uint8Array(photo), contentType: 'image/png' },
      { name: 'images/2.png', body: new Uint8Array(drawing), contentType: 'image/png' },
    ]);
    const JSZip = (await import('jszip')).default;
    const zip = await JSZip.loadAsync(bytes);
    const media = Object.keys(zip.files).filter((name) => name.startsWith('word/media/'));
    expect(media).toHaveLength(2);
    // Read by mammoth: the pictures with their alt text, and the one it does not have as its alt text.
    const { value: html } = await mammoth.convertToHtml({ buffer: Buffer.from(bytes) });
    expect(html).toContain('<img alt="Line drawing" src="data:image/png;base64,');
    expect(html).toMatch(/<td><p><img alt="front\.png" src="data:image\/png;base64,[^"]+" \/><\/p><\/td>/);
    expect(html).toContain('<td><p>side.png</p></td><td><p>side.png</p></td>');
    // A page wide at most (600 px at 96 to the inch = 5,715,000 EMU), the height in proportion.
    const document = await zip.file('word/document.xml')!.async('string');
    const extents = [...document.matchAll(/<wp:extent cx="(\d+)" cy="(\d+)"/g)].map((match) => [
      Number(match[1]),
      Number(match[2]),
    ]);
    expect(extents).toContainEqual([600 * 9525, 150 * 9525]);
    expect(extents).toContainEqual([48 * 9525, 32 * 9525]);
  });
});
