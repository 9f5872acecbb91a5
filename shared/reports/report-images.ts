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

/**
 * `result` with every image it holds as base64 replaced by the name of a file, the files to write,
 * and the list result.json keeps as `images` (empty when there was no image). `result` is not changed.
 */
export function imagesAsFiles(result: Record<string, unknown>): {
  result: Record<string, unknown>;
  files: ImageFile[];
  images: KeptImage[];
} {
  const files: ImageFile[] = [];
  const images: KeptImage[] = [];
  const byHash = new Map<string, KeptImage>();
  const replace = (value: unknown, at: string): unknown => {
    if (typeof value === 'string') {
      const image = imageIn(value);
      if (!image) return value;
      const hash = createHash('sha256').update(image.bytes).digest('hex');
      const known = byHash.get(hash);
      if (known) {
        known.at.push(at);
        return known.file;
      }
      const kept: KeptImage = {
        file: `${imagesFolder}/${images.length + 1}.${image.extension}`,
        contentType: image.type,
        bytes: image.bytes.byteLength,
        at: [at],
      };
      byHash.set(hash, kept);
      images.push(kept);
      files.push({ name: kept.file, body: new Uint8Array(image.bytes), contentType: image.type });
      return kept.file;
    }
    if (Array.isArray(value)) return value.map((item, index) => replace(item, `${at}[${index}]`));
    // Plain objects only: anything else (none is expected) is left as JSON.stringify would see it.
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, replace(item, at ? `${at}.${key}` : key)]),
      );
    return value;
  };
  return { result: replace(result, '') as Record<string, unknown>, files, images };
}
