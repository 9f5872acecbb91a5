/**
 * Product images as a design workflow's input: an http(s) URL the platform can fetch, or the image
 * itself (`data`, base64 or a `data:image/...;base64,` URL), which a job uploads first (p010 turns it
 * into a URL the platform can read). An image given as data is checked as the platform would: PNG or
 * JPEG by its first bytes (not by its name), at most 4,096 KB (p010's limit). Every error names the
 * image (`images[1] (side.jpg): ...`). The bytes never reach a log line or a report: reports show an
 * image's name, type and size.
 */
import * as z from 'zod';

/** p010's limit: images up to 4,096 KB. */
export const maxImageBytes = 4096 * 1024;

/** The image types the platform takes, by their first bytes. */
export type ImageType = 'png' | 'jpeg';

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff];

/** The type of an image by its first bytes, or undefined when it is neither PNG nor JPEG. */
export function imageTypeOf(bytes: Uint8Array): ImageType | undefined {
  const starts = (magic: number[]) => magic.every((byte, index) => bytes[index] === byte);
  if (starts(PNG)) return 'png';
  if (starts(JPEG)) return 'jpeg';
  return undefined;
}

/** What a file that is not PNG or JPEG is, by its first bytes, for the error message. */
function otherKind(bytes: Uint8Array): string {
  const head = Buffer.from(bytes.subarray(0, 12)).toString('latin1');
  if (head.startsWith('GIF8')) return 'a GIF image';
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'a WebP image';
  if (head.startsWith('BM')) return 'a BMP image';
  if (head.startsWith('%PDF')) return 'a PDF document';
  if (head.startsWith('PK')) return 'a zip archive (a .docx?)';
  if (head.slice(4, 8) === 'ftyp') return 'a HEIC/AVIF image';
  if (/^\s*</.test(head)) return 'text (SVG or HTML?)';
  return 'not an image the platform reads';
}

const DATA_URL = /^data:([\w/+.-]*)(;[\w-]+=[\w-]+)*;base64,/i;

/** The bytes of base64 text (a `data:` URL prefix and whitespace allowed), or undefined when it is not base64. */
export function decodeImageData(data: string): Uint8Array | undefined {
  const text = data.trim().replace(DATA_URL, '').replace(/\s+/g, '');
  if (text === '' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(text) || text.length % 4 === 1) return undefined;
  return new Uint8Array(Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
}

/** A size in KB or MB, for messages and reports. */
export function sizeText(bytes: number): string {
  const megabytes = (bytes / 1024 / 1024).toFixed(1);
  // Just over a whole MB ("4.0 MB, over the limit of 4,096 KB" reads as no excess): in KB instead.
  if (bytes >= 1024 * 1024 && megabytes.endsWith('.0') && bytes % (1024 * 1024) !== 0)
    return `${Math.ceil(bytes / 1024).toLocaleString('en')} KB`;
  return bytes >= 1024 * 1024 ? `${megabytes} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/** Why image bytes cannot be sent, or undefined when they can. */
export function imageProblem(bytes: Uint8Array): string | undefined {
  if (bytes.byteLength === 0) return 'the image is empty';
  if (bytes.byteLength > maxImageBytes)
    return `the image is ${sizeText(bytes.byteLength)}, over the platform's limit of 4,096 KB: send a smaller one or a URL`;
  if (!imageTypeOf(bytes)) return `not a PNG or JPEG image (by its first bytes it is ${otherKind(bytes)})`;
  return undefined;
}

/** One product image: `url`, or `data` (the image itself), with an optional `name` for the report. */
export const productImage = z.lazy(() =>
  z
    .strictObject(
      {
        /** A public http(s) URL of the image, which the platform fetches. */
        url: z.url({ protocol: /^https?$/, error: 'url: an http(s) URL of a PNG or JPEG image' }).optional(),
        /** The image itself: base64, or a `data:image/png;base64,...` URL. PNG or JPEG, at most 4,096 KB. */
        data: z.string({ error: 'data: the image as base64 text' }).optional(),
        /** The image's name (a file name), shown in the report. Default: image 1, image 2... */
        name: z.string().trim().min(1).max(200, { error: 'name: at most 200 characters' }).optional(),
      },
      { error: 'an image is {"url": "https://..."} or {"data": "<base64>", "name": "front.png"}' },
    )
    .superRefine((image, ctx) => {
      const label = image.name ? ` (${image.name})` : '';
      if ((image.url === undefined) === (image.data === undefined)) {
        ctx.addIssue({
          code: 'custom',
          message: `image${label}: give either url (an http(s) link) or data (the image as base64), not ${image.url === undefined ? 'neither' : 'both'}`,
        });
        return;
      }
      if (image.data === undefined) return;
      if (image.data.trim().replace(DATA_URL, '').trim() === '') {
        ctx.addIssue({ code: 'custom', path: ['data'], message: `image${label}: the image is empty` });
        return;
      }
      const bytes = decodeImageData(image.data);
      const problem = bytes ? imageProblem(bytes) : 'data is not base64 text';
      if (problem) ctx.addIssue({ code: 'custom', path: ['data'], message: `image${label}: ${problem}` });
    }),
);
export type ProductImage = z.infer<typeof productImage>;

/** What a report and the job's label say of an image: its name, else its URL's file name, else its place. */
export function imageLabel(image: ProductImage, index: number): string {
  if (image.name) return image.name;
  if (image.url) {
    const last = new URL(image.url).pathname.split('/').filter(Boolean).at(-1);
    if (last) return decodeURIComponent(last).slice(0, 120);
  }
  return `image ${index + 1}`;
}

/** "front.png (PNG, 312 KB, uploaded)" or "https://... (by URL)": an image without its bytes. */
export function imageDescription(image: ProductImage, index: number): string {
  if (image.url) return `${imageLabel(image, index)} (by URL: ${image.url})`;
  const bytes = decodeImageData(image.data ?? '') ?? new Uint8Array();
  const type = imageTypeOf(bytes)?.toUpperCase() ?? 'image';
  return `${imageLabel(image, index)} (${type}, ${sizeText(bytes.byteLength)}, uploaded)`;
}

/** An image as a multipart file for p010: its bytes with its type and name. */
export function imageFile(image: ProductImage, index: number): File {
  const bytes = decodeImageData(image.data ?? '') ?? new Uint8Array();
  const type = imageTypeOf(bytes) ?? 'png';
  const base = imageLabel(image, index).replace(/[^\w.-]+/g, '_');
  const name = /\.(png|jpe?g)$/i.test(base) ? base : `${base}.${type === 'png' ? 'png' : 'jpg'}`;
  return new File([Uint8Array.from(bytes)], name, { type: `image/${type}` });
}

/** The extensions `opflow run` reads as images. */
export const imageExtensions = ['.png', '.jpg', '.jpeg'] as const;

/** An image file's bytes as an image input (`{ data, name }`), for `opflow run <workflow> photo.png`. */
export function imageFromFile(bytes: Uint8Array, fileName: string): ProductImage {
  return { data: Buffer.from(bytes).toString('base64'), name: fileName };
}

/** p010's answer: the uploaded image's URL (valid 9 hours) and its lifetime in seconds. */
const uploadAnswer = z.lazy(() =>
  z.looseObject({ url: z.url({ protocol: /^https?$/ }).nullish(), expire: z.number().nullish() }),
);

/** The URL p010 answered for an uploaded image, or undefined when it answered none. */
export function uploadedUrl(data: unknown): string | undefined {
  return uploadAnswer.safeParse(data).data?.url ?? undefined;
}
