/**
 * Real image files for tests, made here rather than kept as binaries: a PNG of one colour (valid
 * chunks and checksums, any size), and a GIF header for what the platform refuses.
 */
import { deflateSync } from 'node:zlib';

/** The CRC-32 of PNG chunks. */
function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.byteLength);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc32(body));
  return Buffer.concat([head, body, tail]);
}

/**
 * A PNG of `width` × `height` pixels in one colour; with `noise`, random pixels that do not
 * compress (for an image of a given size on disk: about width × height × 3 bytes).
 */
export function pngImage(
  width: number,
  height: number,
  rgb: [number, number, number] = [220, 60, 40],
  noise = false,
): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y += 1) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x += 1) {
      const pixel = noise ? [Math.random() * 256, Math.random() * 256, Math.random() * 256] : rgb;
      row.set(pixel.map(Math.floor), 1 + x * 3);
    }
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: noise ? 0 : 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A small PNG (16 × 16, one colour). */
export const tinyPng = () => pngImage(16, 16);

/** The first bytes of a GIF, with padding: an image the platform does not take. */
export const gifImage = () => Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(120, 1)]);
