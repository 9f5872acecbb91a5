/** The documents behind download links: a PDF in a Unicode font, a .docx package, escaped HTML. */
import { extractText, getDocumentProxy, getMeta } from 'unpdf';
import { describe, expect, it } from 'vitest';
import { renderDocx, renderHtml, renderPdf } from '../../../shared/sandbox/documents';

const outline = {
  title: 'Report (draft) \\ 1',
  subtitle: 'For <testing> & review',
  sections: Array.from({ length: 30 }, (_, i) => ({
    heading: `Section ${i + 1}`,
    paragraphs: [`Paragraph ${i + 1} ${'with several words '.repeat(12)}ünïcode.`],
  })),
};

describe('renderPdf', () => {
  it('writes a PDF of several pages whose text extracts as written, Unicode included', async () => {
    const bytes = await renderPdf({
      ...outline,
      sections: [
        {
          heading: 'Unicode – kept',
          paragraphs: [
            'Cycles 100–500 at −20 °C; Müller, Ørsted, Zoë, façade — “naïve” • ±1',
            'Ελληνικά and Кириллица too',
            '固态电池 has no glyph in the font',
          ],
        },
        ...outline.sections,
      ],
    });
    const pdf = await getDocumentProxy(new Uint8Array(bytes));
    expect(pdf.numPages).toBeGreaterThan(1);
    const { text } = await extractText(pdf, { mergePages: true });
    expect(text).toContain('Unicode – kept');
    expect(text).toContain('Cycles 100–500 at −20 °C; Müller, Ørsted, Zoë, façade — “naïve” • ±1');
    expect(text).toContain('Ελληνικά and Кириллица too');
    // DejaVu Sans has no CJK glyphs: each such character is a searchable "?", not an empty box.
    expect(text).toContain('???? has no glyph in the font');
    expect(text).toContain('Report (draft) \\ 1');
    expect(text).toContain('Paragraph 30 with several words');
    expect(text).toContain('ünïcode.');
    const { info } = await getMeta(pdf);
    expect(info['Title']).toBe('Report (draft) \\ 1');
  });

  it('wraps a word wider than the page instead of running off it', async () => {
    const long = 'x'.repeat(400);
    const bytes = await renderPdf({ title: 'Wide', sections: [{ heading: 'H', paragraphs: [long] }] });
    const { text } = await extractText(new Uint8Array(bytes), { mergePages: false });
    const lines = (text as string[])
      .join('\n')
      .split('\n')
      .filter((line) => line.startsWith('x'));
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.join('')).toBe(long);
  });
});

describe('renderDocx', () => {
  it('writes a zip package holding word/document.xml with the title', async () => {
    const docx = Buffer.from(await renderDocx(outline));
    expect(docx.subarray(0, 2).toString('latin1')).toBe('PK');
    expect(docx.includes(Buffer.from('word/document.xml'))).toBe(true);
  });
});

describe('renderHtml', () => {
  it('escapes text and keeps the outline', () => {
    const html = renderHtml(outline);
    expect(html).toContain('<title>Report (draft) \\ 1</title>');
    expect(html).toContain('For &lt;testing&gt; &amp; review');
    expect(html.match(/<h2>/g)).toHaveLength(30);
  });
});
