/**
 * Images inside a job's result.json kept as files beside the report instead: a product image given
 * as data, the line drawing ai39-2 echoes (`line_drawing_base64`). Base64 in JSON is large and
 * useless to a reader; a file opens as an image. Each such string is replaced by the file's name in
 * the report folder (`images/1.png`), and result.json's `images` lists each file with where it was.
 *
 * An image is recognised by its first bytes, not by its field's name: a string of base64 (or a
 * `data:` URL) that decodes to a PNG, JPEG, GIF or WebP image. Equal images share one file. The
 * numbering follows result.json's order, so a report written again writes the same files.
 */
import { createHash } from 'node:crypto';
import { cellText, Rendered } from './markdown';

/** An image kept as a file: its name in the report folder, its type and size, and where it was. */
export interface KeptImage {
  /** The file's name in the report folder, e.g. `images/1.png`; result.json holds it in the image's place. */
  file: string;
  contentType: string;
  bytes: number;
  /** Where in result.json the image was, e.g. `steps.image-1-result.line_drawing_base64`. */
  at: string[];
}

/** The folder of the kept images inside a job's report folder. */
export const imagesFolder = 'images';

/** Shorter strings are not worth a file (a 1×1 PNG is about 90 characters of base64). */
const minimumLength = 64;

const signatures: { type: string; extension: string; test: (bytes: Buffer) => boolean }[] = [
  {
    type: 'image/png',
    extension: 'png',
    test: (bytes) =>
      bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  {
    type: 'image/jpeg',
    extension: 'jpg',
    test: (bytes) => bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff])),
  },
  { type: 'image/gif', extension: 'gif', test: (bytes) => /^GIF8[79]a/.test(bytes.toString('latin1', 0, 6)) },
  {
    type: 'image/webp',
    extension: 'webp',
    test: (bytes) => bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP',
  },
];

const dataUrlPrefix = /^data:image\/[\w.+-]+(;[\w-]+=[\w.-]+)*;base64,/i;
const base64Text = /^[A-Za-z0-9+/]+={0,2}$/;

/** The image a string holds as base64 (or a `data:image/...;base64,` URL), or undefined. */
function imageIn(text: string): { bytes: Buffer; type: string; extension: string } | undefined {
  if (text.length < minimumLength) return undefined;
  const payload = text.replace(dataUrlPrefix, '');
  if (payload.length % 4 !== 0 || !base64Text.test(payload)) return undefined;
  const bytes = Buffer.from(payload, 'base64');
  const signature = signatures.find((entry) => entry.test(bytes));
  return signature && { bytes, type: signature.type, extension: signature.extension };
}

/** A file to write beside the report: its name in the report folder, body and type. */
export interface ImageFile {
  name: string;
  body: Uint8Array;
  contentType: string;
}

/** The images of one report, each named as a file (`images/<n>.<ext>`) when first met; equal images share one. */
export class ReportImageFiles {
  readonly files: ImageFile[] = [];
  readonly images: KeptImage[] = [];
  private readonly byHash = new Map<string, KeptImage>();

  /** The kept file of the image `text` holds (named now when first met), or undefined when it holds none. */
  fileOf(text: string, at?: string): KeptImage | undefined {
    const image = imageIn(text);
    if (!image) return undefined;
    const hash = createHash('sha256').update(image.bytes).digest('hex');
    let kept = this.byHash.get(hash);
    if (!kept) {
      kept = {
        file: `${imagesFolder}/${this.images.length + 1}.${image.extension}`,
        contentType: image.type,
        bytes: image.bytes.byteLength,
        at: [],
      };
      this.byHash.set(hash, kept);
      this.images.push(kept);
      this.files.push({ name: kept.file, body: new Uint8Array(image.bytes), contentType: image.type });
    }
    if (at !== undefined) kept.at.push(at);
    return kept;
  }

  /** `value` with every image it holds as base64 replaced by its file's name (`value` is not changed). */
  replaceIn(value: unknown, at = ''): unknown {
    if (typeof value === 'string') return this.fileOf(value, at)?.file ?? value;
    if (Array.isArray(value)) return value.map((item, index) => this.replaceIn(item, `${at}[${index}]`));
    // Plain objects only: anything else (none is expected) is left as JSON.stringify would see it.
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, this.replaceIn(item, at ? `${at}.${key}` : key)]),
      );
    return value;
  }
}

/**
 * `result` with every image it holds as base64 replaced by the name of a file, the files to write,
 * and the list result.json keeps as `images` (empty when there was no image). `result` is not changed.
 */
export function imagesAsFiles(result: Record<string, unknown>): {
  result: Record<string, unknown>;
  files: ImageFile[];
  images: KeptImage[];
} {
  const kept = new ReportImageFiles();
  const replaced = kept.replaceIn(result) as Record<string, unknown>;
  return { result: replaced, files: kept.files, images: kept.images };
}

/**
 * An image of a report's Markdown: `![alt](data:image/png;base64,...)`, the image itself, so a
 * workflow's report needs no file names. The report's writer puts each where it belongs
 * (`reportWithImageFiles`): report.md links the file beside it, report.html keeps it inside the page,
 * report.docx holds it as a picture. Undefined when `text` (base64 or a `data:` URL) holds no image.
 */
export function imageMarkdown(alt: string, text: string): Rendered | undefined {
  const image = imageIn(text);
  if (!image) return undefined;
  return new Rendered(`![${cellText(alt)}](data:${image.type};base64,${image.bytes.toString('base64')})`);
}

/** A Markdown image holding its data: the alt text (escapes kept) and the data URL. */
const embeddedImage = /!\[((?:\\.|[^\]\\\n])*)\]\((data:image\/[\w.+-]+;base64,[A-Za-z0-9+/]+={0,2})\)/g;

/** The report's HTML keeps an image inside the page up to these sizes; a larger one is linked to its file. */
export const embeddedImageLimits = { eachBytes: 2 * 1024 * 1024, totalBytes: 8 * 1024 * 1024 };

/**
 * The report's Markdown for report.md (each embedded image linked to its file beside the report:
 * `![alt](images/2.png)`) and for report.html (each kept in the page as data, which shows opened from
 * disk, served by the job API and in the dashboard's sandboxed frame alike, whose policies allow
 * images of `data:` only; an image over `embeddedImageLimits` becomes a link to its file).
 */
export function reportWithImageFiles(
  markdown: string,
  kept: ReportImageFiles,
  limits = embeddedImageLimits,
): { markdown: string; page: string } {
  const linked = markdown.replace(embeddedImage, (whole, alt: string, data: string) => {
    const file = kept.fileOf(data)?.file;
    return file ? `![${alt}](${file})` : whole;
  });
  let total = 0;
  const page = markdown.replace(embeddedImage, (whole, alt: string, data: string) => {
    const image = kept.fileOf(data);
    if (!image) return whole;
    if (image.bytes <= limits.eachBytes && total + image.bytes <= limits.totalBytes) {
      total += image.bytes;
      return whole;
    }
    return `[${alt} (${Math.round(image.bytes / 1024).toLocaleString('en')} KB, too large to show in the page: the file ${image.file} beside the report)](${image.file})`;
  });
  return { markdown: linked, page };
}
