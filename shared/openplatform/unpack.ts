/**
 * Decodes the generated catalogue's data (JSON, brotli-compressed, base64): the packed form keeps the
 * 356 operations' rows and shapes to a few dozen KiB in every bundle, and costs a few milliseconds
 * once, when first needed.
 */
import { brotliDecompressSync } from 'node:zlib';

export function unpack<T>(packed: string): T {
  return JSON.parse(brotliDecompressSync(Buffer.from(packed, 'base64')).toString('utf8')) as T;
}
