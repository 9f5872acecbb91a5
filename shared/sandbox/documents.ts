/**
 * Real documents behind the download links: a .docx (through the `docx` package), a small but valid
 * PDF written by hand, and an HTML page. All three render the same outline.
 */
import { Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx';
import * as z from 'zod';

export interface DocumentOutline {
  title: string;
  subtitle?: string;
  sections: { heading: string; paragraphs: string[] }[];
}

/** An outline as kept in a sandbox state file. */
export const documentOutlineSchema = z.strictObject({
  title: z.string(),
  subtitle: z.string().optional(),
  sections: z.array(z.strictObject({ heading: z.string(), paragraphs: z.array(z.string()) })),
}) satisfies z.ZodType<DocumentOutline>;

export const DOCX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export const documentFormats = ['docx', 'pdf', 'html'] as const;
export type DocumentFormat = (typeof documentFormats)[number];

/** The `Content-Type` a document of this format is served with. */
export function contentTypeOf(format: DocumentFormat): string {
  switch (format) {
    case 'docx':
      return DOCX_CONTENT_TYPE;
    case 'pdf':
      return 'application/pdf';
    case 'html':
      return 'text/html; charset=utf-8';
  }
}

/** The document's bytes in the format. */
export async function renderDocument(format: DocumentFormat, outline: DocumentOutline): Promise<Uint8Array> {
  switch (format) {
    case 'docx':
      return renderDocx(outline);
    case 'pdf':
      return renderPdf(outline);
    case 'html':
      return new Uint8Array(Buffer.from(renderHtml(outline), 'utf8'));
  }
}

export async function renderDocx(outline: DocumentOutline): Promise<Uint8Array> {
  const children: Paragraph[] = [new Paragraph({ text: outline.title, heading: HeadingLevel.TITLE })];
  if (outline.subtitle)
    children.push(new Paragraph({ children: [new TextRun({ text: outline.subtitle, italics: true })] }));
  for (const section of outline.sections) {
    children.push(new Paragraph({ text: section.heading, heading: HeadingLevel.HEADING_1 }));
    for (const paragraph of section.paragraphs) children.push(new Paragraph({ text: paragraph }));
  }
  const document = new Document({
    creator: 'opflow sandbox',
    title: outline.title,
    sections: [{ children }],
  });
  return new Uint8Array(await Packer.toBuffer(document));
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

export function renderHtml(outline: DocumentOutline): string {
  const sections = outline.sections
    .map(
      (section) =>
        `<section>\n<h2>${escapeHtml(section.heading)}</h2>\n${section.paragraphs
          .map((p) => `<p>${escapeHtml(p)}</p>`)
          .join('\n')}\n</section>`,
    )
    .join('\n');
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${escapeHtml(outline.title)}</title>`,
    '<style>body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;line-height:1.5}</style>',
    '</head>',
    '<body>',
    `<h1>${escapeHtml(outline.title)}</h1>`,
    outline.subtitle ? `<p><em>${escapeHtml(outline.subtitle)}</em></p>` : '',
    sections,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

// --- PDF: one font, text only; enough for a reader to open and for a test to parse. ---

const PAGE_WIDTH = 595;
const PAGE_HEIGHT = 842;
const MARGIN = 56;
const LEADING = 14;
const LINE_CHARS = 88;
const LINES_PER_PAGE = Math.floor((PAGE_HEIGHT - 2 * MARGIN) / LEADING);

/** PDF standard fonts speak Latin-1; anything else becomes '?'. */
const pdfText = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').replace(/[\\()]/g, (c) => `\\${c}`);

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    for (let rest = word; rest.length > 0; rest = rest.slice(width)) {
      const piece = rest.slice(0, width);
      if (line.length === 0) line = piece;
      else if (line.length + 1 + piece.length <= width) line += ` ${piece}`;
      else {
        lines.push(line);
        line = piece;
      }
    }
  }
  if (line.length > 0) lines.push(line);
  return lines;
}

export function renderPdf(outline: DocumentOutline): Uint8Array {
  const lines: { text: string; bold: boolean }[] = [{ text: outline.title, bold: true }];
  if (outline.subtitle)
    lines.push(...wrap(outline.subtitle, LINE_CHARS).map((text) => ({ text, bold: false })));
  for (const section of outline.sections) {
    lines.push({ text: '', bold: false }, { text: section.heading, bold: true });
    for (const paragraph of section.paragraphs) {
      lines.push(...wrap(paragraph, LINE_CHARS).map((text) => ({ text, bold: false })));
    }
  }
  const pages: (typeof lines)[] = [];
  for (let i = 0; i < lines.length; i += LINES_PER_PAGE) pages.push(lines.slice(i, i + LINES_PER_PAGE));

  // Objects: 1 catalog, 2 pages, 3 regular font, 4 bold font, 5 info, then a page and its content per page.
  const objects: string[] = [];
  const pageIds = pages.map((_, index) => 6 + index * 2);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  objects[4] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>';
  objects[5] = `<< /Title (${pdfText(outline.title)}) /Producer (opflow sandbox) >>`;
  pages.forEach((pageLines, index) => {
    const pageId = pageIds[index] as number;
    const operators = pageLines
      .map((line) => `/${line.bold ? 'F2' : 'F1'} 11 Tf (${pdfText(line.text)}) Tj T*`)
      .join('\n');
    const stream = `BT\n${LEADING} TL\n${MARGIN} ${PAGE_HEIGHT - MARGIN} Td\n${operators}\nET`;
    objects[pageId] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${PAGE_WIDTH} ${PAGE_HEIGHT}] ` +
      `/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents ${pageId + 1} 0 R >>`;
    objects[pageId + 1] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  });

  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = out.length;
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xrefAt = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R /Info 5 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, 'latin1'));
}
