/**
 * Real documents behind the download links: a .docx (through the `docx` package), a PDF (through
 * `pdf-lib`, in an embedded Unicode font) and an HTML page. All three render the same outline.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx';
import type { PDFFont } from 'pdf-lib';
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

// --- PDF: text only, in an embedded Unicode font; what a reader opens and a test extracts. ---

const PAGE_WIDTH = 595;
const PAGE_HEIGHT = 842;
const MARGIN = 56;
const FONT_SIZE = 11;
const TITLE_SIZE = 15;
const LEADING = 15;

const require = createRequire(import.meta.url);

/**
 * DejaVu Sans (regular and bold), from the `dejavu-fonts-ttf` package: Latin with every accent,
 * Greek, Cyrillic and the typographic punctuation (en and em dashes, quotes, bullets, ±). It has no
 * CJK glyphs, nor has any font small enough to ship with opflow; characters the font lacks are
 * printed as "?" (the PDF's text then says so, instead of an empty box a reader cannot search for).
 */
let fontFiles: Promise<{ regular: Uint8Array; bold: Uint8Array }> | undefined;
function loadFonts() {
  fontFiles ??= Promise.all([
    readFile(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')),
    readFile(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf')),
  ]).then(([regular, bold]) => ({ regular: new Uint8Array(regular), bold: new Uint8Array(bold) }));
  return fontFiles;
}

/**
 * pdf-lib and fontkit, loaded on the first PDF: fontkit is one 2 MB CommonJS file whose parsing
 * (and Node's scan of its exports) took about a second of every `opflow` command's start, even
 * `opflow --version`, since the built-in sandbox's modules are imported by every local command.
 */
let pdfLibrary: Promise<{ PDFDocument: typeof import('pdf-lib').PDFDocument; fontkit: unknown }> | undefined;
function loadPdfLibrary() {
  pdfLibrary ??= Promise.all([import('pdf-lib'), import('@pdf-lib/fontkit')]).then(([lib, kit]) => ({
    PDFDocument: lib.PDFDocument,
    fontkit: kit.default,
  }));
  return pdfLibrary;
}

/** What is measured of a font, once per font: the characters it draws and their advances. */
interface Metrics {
  supported: Set<number>;
  widths: Map<string, number>;
}
const metricsOf = new WeakMap<PDFFont, Metrics>();
function metrics(font: PDFFont): Metrics {
  let found = metricsOf.get(font);
  if (!found) {
    found = { supported: new Set(font.getCharacterSet()), widths: new Map() };
    metricsOf.set(font, found);
  }
  return found;
}

/** `text` with the characters `font` cannot draw as "?", and control characters as spaces. */
function drawable(font: PDFFont, text: string): string {
  const { supported } = metrics(font);
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (code < 0x20 || code === 0x7f) out += ' ';
    else out += supported.has(code) ? char : '?';
  }
  return out;
}

/**
 * The width of `text` at `size`: the sum of its characters' advances, each measured once (pdf-lib
 * draws glyph after glyph at their advances; measuring whole lines through fontkit's layout costs
 * milliseconds a call).
 */
function widthOf(font: PDFFont, size: number, text: string): number {
  const { widths } = metrics(font);
  let width = 0;
  for (const char of text) {
    let advance = widths.get(char);
    if (advance === undefined) {
      advance = font.widthOfTextAtSize(char, 1000);
      widths.set(char, advance);
    }
    width += advance;
  }
  return (width * size) / 1000;
}

/** Lines of at most `width` points: words kept whole unless one alone is wider than a line. */
function wrap(font: PDFFont, size: number, text: string, width: number): string[] {
  const fits = (line: string) => widthOf(font, size, line) <= width;
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (fits(candidate)) {
      line = candidate;
      continue;
    }
    if (line !== '') lines.push(line);
    line = '';
    let rest = [...word];
    while (!fits(rest.join(''))) {
      // The longest head that fits (at least one character, so a line always moves on).
      let low = 1;
      let high = rest.length - 1;
      while (low < high) {
        const middle = Math.ceil((low + high) / 2);
        if (fits(rest.slice(0, middle).join(''))) low = middle;
        else high = middle - 1;
      }
      lines.push(rest.slice(0, low).join(''));
      rest = rest.slice(low);
    }
    line = rest.join('');
  }
  if (line !== '') lines.push(line);
  return lines;
}

export async function renderPdf(outline: DocumentOutline): Promise<Uint8Array> {
  const [files, { PDFDocument, fontkit }] = await Promise.all([loadFonts(), loadPdfLibrary()]);
  const pdf = await PDFDocument.create();
  pdf.registerFontkit(fontkit as Parameters<typeof pdf.registerFontkit>[0]);
  const regular = await pdf.embedFont(files.regular, { subset: true });
  const bold = await pdf.embedFont(files.bold, { subset: true });
  pdf.setTitle(drawable(regular, outline.title));
  pdf.setProducer('opflow sandbox');
  pdf.setCreationDate(new Date(0));
  pdf.setModificationDate(new Date(0));

  const lines: { text: string; font: PDFFont; size: number; gapBefore: number }[] = [];
  const add = (text: string, font: PDFFont, size: number, gapBefore = 0) => {
    wrap(font, size, drawable(font, text), PAGE_WIDTH - 2 * MARGIN).forEach((line, index) => {
      lines.push({ text: line, font, size, gapBefore: index === 0 ? gapBefore : 0 });
    });
  };
  add(outline.title, bold, TITLE_SIZE);
  if (outline.subtitle) add(outline.subtitle, regular, FONT_SIZE, 4);
  for (const section of outline.sections) {
    add(section.heading, bold, FONT_SIZE + 1, LEADING);
    for (const paragraph of section.paragraphs) add(paragraph, regular, FONT_SIZE, 4);
  }

  let page = pdf.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
  let y = PAGE_HEIGHT - MARGIN;
  for (const line of lines) {
    const height = Math.max(LEADING, line.size + 4);
    y -= line.gapBefore + height;
    if (y < MARGIN) {
      page = pdf.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
      y = PAGE_HEIGHT - MARGIN - height;
    }
    page.drawText(line.text, { x: MARGIN, y, font: line.font, size: line.size });
  }
  return pdf.save();
}
