/**
 * What a zip archive (a .docx) would unpack to, read from its central directory alone: the entries'
 * declared uncompressed sizes, without inflating anything. A .docx of 1 MB can hold a document.xml of
 * gigabytes; mammoth would inflate it whole. The sizes are checked before mammoth runs.
 */

export interface ZipSummary {
  entries: number;
  /** The sum of the entries' uncompressed sizes, in bytes. */
  uncompressedBytes: number;
}

const endOfCentralDirectory = 0x06054b50;
const centralDirectoryEntry = 0x02014b50;

/** The central directory's summary, or a reason the bytes are not a readable zip archive. */
export function summarizeZip(bytes: Uint8Array): ZipSummary | { problem: string } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end record is in the last 22 bytes plus a comment of at most 65,535.
  let end = -1;
  for (let at = bytes.byteLength - 22; at >= Math.max(0, bytes.byteLength - 22 - 65_535); at--) {
    if (view.getUint32(at, true) === endOfCentralDirectory) {
      end = at;
      break;
    }
  }
  if (end < 0) return { problem: 'not a zip archive (no central directory)' };
  const count = view.getUint16(end + 10, true);
  const size = view.getUint32(end + 12, true);
  const offset = view.getUint32(end + 16, true);
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff)
    return { problem: 'a ZIP64 archive, which a document never needs' };
  if (offset + size > end) return { problem: 'its central directory lies outside the file' };
  let at = offset;
  let uncompressedBytes = 0;
  for (let index = 0; index < count; index++) {
    if (at + 46 > end || view.getUint32(at, true) !== centralDirectoryEntry)
      return { problem: `its central directory is damaged (entry ${index + 1})` };
    const uncompressed = view.getUint32(at + 24, true);
    if (uncompressed === 0xffffffff) return { problem: 'an entry of 4 GB or more (ZIP64)' };
    uncompressedBytes += uncompressed;
    at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return { entries: count, uncompressedBytes };
}
