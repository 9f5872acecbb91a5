/**
 * A report's Markdown as a Word document (report.docx), for the people who file and forward Word:
 * headings, paragraphs, lists, quotes (the sandbox notice), links and every table (a novelty check's
 * features × references matrix, an FTO claim chart) as a Word table with a repeated header row.
 * Pages turn to landscape when a table is wider than a portrait page holds.
 *
 * Built from marked's tokens with the `docx` package; both are imported by the caller on first use
 * (write-job-report.ts), so no function's cold start carries them. Raw HTML in the Markdown (which
 * may come from upstream text) is kept as text, never interpreted; links go only to web pages or to
 * files beside the report (relative paths), never to `file:` or script URLs. An image of the report
 * (`![alt](images/1.png)`, a file beside it) is placed as a picture, at most a page wide (half a page
 * in a table's cell); one it does not have, or Word cannot show (WebP), stays its alt text.
 */
import {
  AlignmentType,
  BorderStyle,
  Document,
  ExternalHyperlink,
  HeadingLevel,
  ImageRun,
  LevelFormat,
  Packer,
  PageOrientation,
  Paragraph,
  type ParagraphChild,
  ShadingType,
  Table,
  TableCell,
  TableRow,
  TextRun,
  WidthType,
} from 'docx';
import { imageSize } from 'image-size';
import { Lexer, type Token, type Tokens } from 'marked';
import type { ImageFile } from './report-images';

/** A table with more columns than this turns the pages to landscape. */
const portraitColumns = 6;

interface Style {
  bold?: boolean;
  italics?: boolean;
  code?: boolean;
  strike?: boolean;
}

const headingLevels = [
  HeadingLevel.HEADING_1,
  HeadingLevel.HEADING_2,
  HeadingLevel.HEADING_3,
  HeadingLevel.HEADING_4,
  HeadingLevel.HEADING_5,
  HeadingLevel.HEADING_6,
] as const;

/** A link Word may open: a web page, or a file beside the report. */
const safeLink = (href: string) =>
  /^https?:\/\//i.test(href) || (!/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('//'));

const run = (text: string, style: Style, size?: number) =>
  new TextRun({
    text,
    bold: style.bold,
    italics: style.italics,
    strike: style.strike,
    ...(style.code ? { font: 'Consolas' } : {}),
    ...(size ? { size } : {}),
  });

/** The report's image files by name, and the widest a picture may be where it is placed (pixels). */
interface Pictures {
  files: ReadonlyMap<string, ImageFile>;
}

/** Pixels at 96 to the inch: a portrait page's text width, and a picture's height at most. */
const pageWidthPx = 600;
const pictureHeightPx = 400;
const pictureTypes = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif' } as const;

/** The picture of `image` (a file beside the report) within `maxWidth` pixels, or undefined. */
function picture(image: Tokens.Image, pictures: Pictures, maxWidth: number): ImageRun | undefined {
  const file = pictures.files.get(image.href);
  const type = file && pictureTypes[file.contentType as keyof typeof pictureTypes];
  if (!file || !type) return undefined;
  let size: { width?: number | undefined; height?: number | undefined };
  try {
    size = imageSize(file.body);
  } catch {
    return undefined;
  }
  if (!size.width || !size.height) return undefined;
  const scale = Math.min(1, maxWidth / size.width, pictureHeightPx / size.height);
  return new ImageRun({
    type,
    data: file.body,
    transformation: {
      width: Math.max(1, Math.round(size.width * scale)),
      height: Math.max(1, Math.round(size.height * scale)),
    },
    altText: { name: image.text, description: image.text, title: image.text },
  });
}

/** Inline tokens as runs and links. `size`: half-points (tables use a smaller font). */
function inline(
  tokens: readonly Token[] | undefined,
  style: Style = {},
  size?: number,
  pictures: Pictures = noPictures,
  maxWidth = pageWidthPx,
): ParagraphChild[] {
  const out: ParagraphChild[] = [];
  for (const token of tokens ?? []) {
    switch (token.type) {
      case 'strong':
        out.push(
          ...inline((token as Tokens.Strong).tokens, { ...style, bold: true }, size, pictures, maxWidth),
        );
        break;
      case 'em':
        out.push(
          ...inline((token as Tokens.Em).tokens, { ...style, italics: true }, size, pictures, maxWidth),
        );
        break;
      case 'del':
        out.push(
          ...inline((token as Tokens.Del).tokens, { ...style, strike: true }, size, pictures, maxWidth),
        );
        break;
      case 'codespan':
        out.push(run((token as Tokens.Codespan).text, { ...style, code: true }, size));
        break;
      case 'br':
        out.push(new TextRun({ break: 1 }));
        break;
      case 'link': {
        const link = token as Tokens.Link;
        const children = inline(link.tokens, style, size);
        const runs = children.filter((child): child is TextRun => child instanceof TextRun);
        if (safeLink(link.href))
          out.push(
            new ExternalHyperlink({
              link: link.href,
              children: runs.length > 0 ? runs : [run(link.text, style, size)],
            }),
          );
        else out.push(...children);
        break;
      }
      case 'image': {
        const image = token as Tokens.Image;
        out.push(picture(image, pictures, maxWidth) ?? run(image.text, style, size));
        break;
      }
      case 'text': {
        const text = token as Tokens.Text;
        if (text.tokens && text.tokens.length > 0)
          out.push(...inline(text.tokens, style, size, pictures, maxWidth));
        else out.push(run(decodeEntities(text.text), style, size));
        break;
      }
      case 'escape':
        out.push(run((token as Tokens.Escape).text, style, size));
        break;
      default:
        // Raw HTML and anything else: its text, never interpreted.
        out.push(run(decodeEntities((token as { raw: string }).raw), style, size));
    }
  }
  return out;
}

/** marked keeps entities of plain text escaped (`&amp;`): Word wants the characters. */
const decodeEntities = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

const noPictures: Pictures = { files: new Map() };

const cellBorder = { style: BorderStyle.SINGLE, size: 4, color: 'BFBFBF' };

function table(token: Tokens.Table, pictures: Pictures): Table {
  const size = token.header.length > portraitColumns ? 14 : 16;
  const alignment = (index: number) =>
    token.align[index] === 'right'
      ? AlignmentType.RIGHT
      : token.align[index] === 'center'
        ? AlignmentType.CENTER
        : AlignmentType.LEFT;
  const cell = (item: Tokens.TableCell, index: number, header: boolean) =>
    new TableCell({
      children: [
        new Paragraph({
          alignment: alignment(index),
          children: inline(
            item.tokens,
            header ? { bold: true } : {},
            size,
            pictures,
            pageWidthPx / Math.max(2, token.header.length),
          ),
        }),
      ],
      borders: { top: cellBorder, bottom: cellBorder, left: cellBorder, right: cellBorder },
      ...(header ? { shading: { type: ShadingType.CLEAR, color: 'auto', fill: 'F2F2F2' } } : {}),
      margins: { top: 40, bottom: 40, left: 80, right: 80 },
    });
  return new Table({
    width: { size: 100, type: WidthType.PERCENTAGE },
    rows: [
      new TableRow({
        tableHeader: true,
        children: token.header.map((item, index) => cell(item, index, true)),
      }),
      ...token.rows.map(
        (row) => new TableRow({ children: row.map((item, index) => cell(item, index, false)) }),
      ),
    ],
  });
}

/** Block tokens as paragraphs and tables. */
function blocks(
  tokens: readonly Token[],
  pictures: Pictures,
  depth = 0,
  quoted = false,
): (Paragraph | Table)[] {
  const out: (Paragraph | Table)[] = [];
  for (const token of tokens) {
    switch (token.type) {
      case 'heading': {
        const heading = token as Tokens.Heading;
        out.push(
          new Paragraph({
            heading: headingLevels[Math.min(heading.depth, 6) - 1],
            children: inline(heading.tokens),
          }),
        );
        break;
      }
      case 'paragraph':
        out.push(
          new Paragraph({
            children: inline((token as Tokens.Paragraph).tokens, {}, undefined, pictures),
            ...(quoted
              ? {
                  indent: { left: 360 },
                  border: { left: { style: BorderStyle.SINGLE, size: 18, color: 'B45309', space: 8 } },
                  shading: { type: ShadingType.CLEAR, color: 'auto', fill: 'FFF3CD' },
                }
              : {}),
            spacing: { after: 120 },
          }),
        );
        break;
      case 'blockquote':
        out.push(...blocks((token as Tokens.Blockquote).tokens, pictures, depth, true));
        break;
      case 'list': {
        const list = token as Tokens.List;
        for (const item of list.items) {
          const [first, ...rest] = item.tokens;
          const lead = first && (first.type === 'text' || first.type === 'paragraph') ? first : undefined;
          out.push(
            new Paragraph({
              children: inline(lead ? (lead as Tokens.Text).tokens : [], {}, undefined, pictures),
              ...(list.ordered
                ? { numbering: { reference: 'ordered', level: Math.min(depth, 8) } }
                : { bullet: { level: Math.min(depth, 8) } }),
            }),
          );
          out.push(...blocks(lead ? rest : item.tokens, pictures, depth + 1, quoted));
        }
        break;
      }
      case 'table':
        out.push(table(token as Tokens.Table, pictures), new Paragraph({ children: [] }));
        break;
      case 'code':
        for (const line of (token as Tokens.Code).text.split('\n'))
          out.push(new Paragraph({ children: [run(line, { code: true }, 18)] }));
        break;
      case 'hr':
        out.push(
          new Paragraph({
            children: [],
            border: { bottom: { style: BorderStyle.SINGLE, size: 6, color: 'BFBFBF', space: 1 } },
          }),
        );
        break;
      case 'space':
        break;
      case 'text': {
        const text = token as Tokens.Text;
        out.push(
          new Paragraph({
            children: text.tokens
              ? inline(text.tokens, {}, undefined, pictures)
              : [run(decodeEntities(text.text), {})],
          }),
        );
        break;
      }
      default:
        // Raw HTML blocks and anything else: their text, never interpreted.
        out.push(new Paragraph({ children: [run((token as { raw: string }).raw.trim(), {})] }));
    }
  }
  return out;
}

const widest = (tokens: readonly Token[]): number =>
  Math.max(
    0,
    ...tokens.map((token) =>
      token.type === 'table'
        ? (token as Tokens.Table).header.length
        : token.type === 'blockquote'
          ? widest((token as Tokens.Blockquote).tokens)
          : 0,
    ),
  );

/**
 * The report as a .docx file. `title`: the document's title property (the report's heading).
 * `images`: the files beside the report its Markdown's images name, placed as pictures.
 */
export async function markdownToDocx(
  markdown: string,
  title: string,
  images: readonly ImageFile[] = [],
): Promise<Uint8Array> {
  const pictures: Pictures = { files: new Map(images.map((file) => [file.name, file])) };
  const tokens = new Lexer({ gfm: true }).lex(markdown);
  const landscape = widest(tokens) > portraitColumns;
  const document = new Document({
    title,
    creator: 'opflow',
    styles: {
      default: { document: { run: { font: 'Calibri', size: 21 } } },
      paragraphStyles: [],
    },
    numbering: {
      config: [
        {
          reference: 'ordered',
          levels: Array.from({ length: 9 }, (_, level) => ({
            level,
            format: LevelFormat.DECIMAL,
            text: `%${level + 1}.`,
            alignment: AlignmentType.START,
            style: { paragraph: { indent: { left: 720 * (level + 1), hanging: 360 } } },
          })),
        },
      ],
    },
    sections: [
      {
        properties: {
          page: {
            size: { orientation: landscape ? PageOrientation.LANDSCAPE : PageOrientation.PORTRAIT },
            margin: { top: 1000, bottom: 1000, left: 1000, right: 1000 },
          },
        },
        children: blocks(tokens, pictures),
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(document));
}
