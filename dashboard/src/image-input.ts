/**
 * Product images for the design workflows' form, judged in the page as the server judges them
 * (shared/workflows/design-infringement-search/images.ts): PNG or JPEG by the first bytes, not by
 * the name; at most 4,096 KB. A chosen file is sent as a `data:` URL inside `POST /jobs`, whose body
 * may hold 1 MiB (shared/http/body-limit.ts): base64 takes a third more, so a file over about 760 KB
 * cannot go from the page. The page says so when the file is chosen, with what to do instead, and
 * never sends a request that would be refused for its size. The figures are the server's (a unit
 * test holds them equal).
 */

/** One image of the input: `{url}` or `{data, name}`, as the workflows take it. */
export interface ImageInput {
  url?: string;
  data?: string;
  name?: string;
}

/** The platform's limit of an image (p010): 4,096 KB. */
export const maxImageBytes = 4096 * 1024;
/** The job API's body limit: 1 MiB. */
export const maxBodyBytes = 1024 * 1024;
/** Room in a request for everything but the image's base64 (workflow, names, options): 2 KB. */
const requestOverheadBytes = 2 * 1024;
/** The largest file that fits as data in one request, rounded down to 10 KB: 760 KB. */
export const largestImageAsData =
  Math.floor(((maxBodyBytes - requestOverheadBytes) * 3) / 4 / 1024 / 10) * 10 * 1024;

/** What to do with an image too large to go from the page (`name`: the file's; none: the form's images). */
export const largeImageAdvice = (workflow: string, name?: string) =>
  name === undefined
    ? `give the large images by URL instead (up to 4,096 KB each), or start the job from the files on the machine that runs opflow: opflow run ${workflow} <image files> (or opflow ingest <folder> --workflow ${workflow})`
    : `give its URL instead (up to 4,096 KB), or start the job from the file on the machine that runs opflow: opflow run ${workflow} ${JSON.stringify(name)} (or opflow ingest <folder> --workflow ${workflow})`;

/** A size in KB or MB, as the server writes it. */
export function sizeText(bytes: number): string {
  const megabytes = (bytes / 1024 / 1024).toFixed(1);
  if (bytes >= 1024 * 1024 && megabytes.endsWith('.0') && bytes % (1024 * 1024) !== 0)
    return `${Math.ceil(bytes / 1024).toLocaleString('en')} KB`;
  return bytes >= 1024 * 1024 ? `${megabytes} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/** PNG or JPEG by the first bytes, else what they are, in words ("a GIF image"). */
export function imageKindOf(head: Uint8Array): { type: 'png' | 'jpeg' } | { other: string } {
  const starts = (magic: number[]) => magic.every((byte, index) => head[index] === byte);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { type: 'png' };
  if (starts([0xff, 0xd8, 0xff])) return { type: 'jpeg' };
  const text = String.fromCharCode(...head.subarray(0, 12));
  if (text.startsWith('GIF8')) return { other: 'a GIF image' };
  if (text.startsWith('RIFF') && text.slice(8, 12) === 'WEBP') return { other: 'a WebP image' };
  if (text.startsWith('BM')) return { other: 'a BMP image' };
  if (text.startsWith('%PDF')) return { other: 'a PDF document' };
  if (text.startsWith('PK')) return { other: 'a zip archive (a .docx?)' };
  if (text.slice(4, 8) === 'ftyp') return { other: 'a HEIC/AVIF image' };
  if (/^\s*</.test(text)) return { other: 'text (SVG or HTML?)' };
  return { other: 'not an image the platform reads' };
}

/** Why a file cannot be sent from the page, or undefined when it can: its size, then its first bytes. */
export function fileProblem(
  file: { name: string; size: number },
  head: Uint8Array,
  workflow: string,
): string | undefined {
  if (file.size === 0) return `${file.name}: the file is empty`;
  const kind = imageKindOf(head);
  if ('other' in kind)
    return `${file.name}: not a PNG or JPEG image (by its first bytes it is ${kind.other})`;
  if (file.size > maxImageBytes)
    return `${file.name}: ${sizeText(file.size)}, over the platform's limit of 4,096 KB: send a smaller image`;
  if (file.size > largestImageAsData)
    return `${file.name}: ${sizeText(file.size)} is too large to send from this page (a request holds 1 MiB, about ${largestImageAsData / 1024} KB of image): ${largeImageAdvice(workflow, file.name)}`;
  return undefined;
}

/** Why a typed URL is no image URL, or undefined when it is an http(s) URL. */
export function urlProblem(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:'
      ? undefined
      : `${text}: an http(s) URL of a PNG or JPEG image`;
  } catch {
    return `${text}: not a URL (an image's address starts with https://)`;
  }
}

/** The bytes an image given as data holds (from its base64's length), 0 for one by URL. */
export function imageBytes(image: ImageInput): number {
  if (!image.data) return 0;
  const base64 = image.data.slice(image.data.indexOf(',') + 1);
  return Math.floor((base64.length * 3) / 4) - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
}

/**
 * An image given as data as a `data:` URL for its thumbnail: as it is, or (plain base64, as
 * `opflow run` keeps a file) with the type its first bytes say.
 */
export function dataUrlOf(image: ImageInput): string | undefined {
  if (!image.data) return undefined;
  if (image.data.startsWith('data:')) return image.data;
  let head: Uint8Array;
  try {
    head = Uint8Array.from(atob(image.data.slice(0, 24)), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
  const kind = imageKindOf(head);
  return 'type' in kind ? `data:image/${kind.type};base64,${image.data}` : undefined;
}

/** "front.png (PNG, 12 KB)" or "side.jpg (by URL)". */
export function imageText(image: ImageInput, index: number): string {
  const name = image.name ?? (image.url ? lastPart(image.url) : undefined) ?? `image ${index + 1}`;
  if (image.url) return `${name} (by URL)`;
  const type = /^data:image\/(\w+)/.exec(dataUrlOf(image) ?? '')?.[1]?.toUpperCase() ?? 'image';
  return `${name} (${type}, ${sizeText(imageBytes(image))})`;
}

function lastPart(url: string): string | undefined {
  try {
    const last = new URL(url).pathname.split('/').filter(Boolean).at(-1);
    return last ? decodeURIComponent(last) : undefined;
  } catch {
    return undefined;
  }
}

/** The UTF-8 size of a request body as `fetch` sends it. */
export const bodyBytes = (body: unknown) => new TextEncoder().encode(JSON.stringify(body)).byteLength;
