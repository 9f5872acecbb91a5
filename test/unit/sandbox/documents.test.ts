/** The documents behind download links: a valid PDF, a .docx package, escaped HTML. */
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
  it('writes a PDF whose cross-reference table points at its objects', () => {
    const pdf = Buffer.from(renderPdf(outline)).toString('latin1');
    expect(pdf.startsWith('%PDF-1.4\n')).toBe(true);
    expect(pdf.endsWith('%%EOF\n')).toBe(true);
    const startxref = Number(pdf.match(/startxref\n(\d+)\n/)?.[1]);
    expect(pdf.slice(startxref, startxref + 4)).toBe('xref');
    const offsets = [...pdf.slice(startxref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
    offsets.forEach((offset, index) => {
      expect(pdf.slice(offset, offset + `${index + 1} 0 obj`.length)).toBe(`${index + 1} 0 obj`);
    });
    const count = Number(pdf.match(/\/Count (\d+)/)?.[1]);
    expect(count).toBeGreaterThan(1);
    expect(pdf).toContain('(Report \\(draft\\) \\\\ 1)');
    for (const match of pdf.matchAll(/<< \/Length (\d+) >>\nstream\n/g)) {
      const start = (match.index ?? 0) + match[0].length;
      expect(pdf.slice(start + Number(match[1]), start + Number(match[1]) + 10)).toBe('\nendstream');
    }
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
