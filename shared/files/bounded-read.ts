/**
 * The one rule for every file opflow reads from outside (run's inputs, manifests and the documents
 * they name, `call` bodies and uploads, config files): a regular file only, a size limit, and the
 * reading stops at the limit. The file is opened non-blocking (a FIFO does not hold the open), then
 * checked on the opened descriptor (fstat: what is read is what was checked), and files of the
 * kernel's pseudo file systems (/proc, /sys) are refused, since their size says nothing of what a read
 * returns. Standard input gets the same limit, stopping there.
 */
import { constants, statfsSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { errorMessage } from '../errors/error-message';

/** A file (or stream) opflow will not read, and why, in words; `path` as the caller named it. */
export class FileRefused extends Error {
  override readonly name = 'FileRefused';
  constructor(
    readonly path: string,
    readonly reason: string,
    readonly code?: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

export interface BoundedReadOptions {
  /** The most bytes accepted; a larger file is refused before any byte is read. */
  maxBytes: number;
  /** The path as the user named it, for messages. Default: the path opened. */
  shownAs?: string | undefined;
}

/** Magic numbers of statfs(2) for the kernel's pseudo file systems (Linux). */
const pseudoFileSystems = new Map<number, string>([
  [0x9fa0, '/proc'],
  [0x62656572, '/sys'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x62656570, 'configfs'],
]);

/** The pseudo file system `path` lies on (`/proc`, `/sys`...), if any. */
export function pseudoFileSystemOf(path: string): string | undefined {
  try {
    return pseudoFileSystems.get(Number(statfsSync(path).type));
  } catch {
    return undefined;
  }
}

/** The reason for a failed open or read, in words (no bare errno). */
export function describeFileError(error: unknown): string {
  if (error instanceof FileRefused) return error.reason;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a folder, not a file';
    case 'ENOTDIR':
      return 'a part of the path is a file, not a folder';
    case 'ENAMETOOLONG':
      return 'the path is too long';
    case 'ELOOP':
      return 'too many symbolic links';
    case 'EMFILE':
    case 'ENFILE':
      return 'too many open files; try again';
    case 'EIO':
      return 'an input/output error from the disk';
    default:
      return errorMessage(error);
  }
}

function refuse(shownAs: string, error: unknown): FileRefused {
  if (error instanceof FileRefused) return error;
  return new FileRefused(shownAs, describeFileError(error), (error as NodeJS.ErrnoException)?.code);
}

/**
 * Opens `path` for reading if it is a regular file of at most `maxBytes` (checked on the descriptor),
 * with its size. The caller closes the handle. Throws FileRefused.
 */
export async function openRegularFile(
  path: string,
  options: BoundedReadOptions,
): Promise<{ handle: FileHandle; size: number }> {
  const shownAs = options.shownAs ?? path;
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw refuse(shownAs, error);
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new FileRefused(shownAs, 'is a folder, not a file', 'EISDIR');
    if (!info.isFile())
      throw new FileRefused(shownAs, 'not a regular file (a FIFO, a device or a socket); give a file');
    const pseudo = pseudoFileSystemOf(path);
    if (pseudo) throw new FileRefused(shownAs, `is a file of ${pseudo}, not a regular file; give a file`);
    if (info.size > options.maxBytes) throw new FileRefused(shownAs, tooLarge(info.size, options.maxBytes));
    return { handle, size: info.size };
  } catch (error) {
    await handle.close();
    throw refuse(shownAs, error);
  }
}

/** The bytes of a regular file of at most `maxBytes` (a file that grew past it meanwhile is refused). */
export async function readRegularFile(path: string, options: BoundedReadOptions): Promise<Buffer> {
  const shownAs = options.shownAs ?? path;
  const { handle } = await openRegularFile(path, options);
  try {
    const limit = options.maxBytes + 1;
    const chunks: Buffer[] = [];
    let filled = 0;
    while (filled < limit) {
      const buffer = Buffer.alloc(Math.min(limit - filled, 1024 * 1024));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, filled);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      filled += bytesRead;
    }
    if (filled > options.maxBytes) throw new FileRefused(shownAs, tooLarge(filled, options.maxBytes, true));
    return Buffer.concat(chunks, filled);
  } catch (error) {
    throw refuse(shownAs, error);
  } finally {
    await handle.close();
  }
}

/** A regular file's bytes from `start` as a stream (for manifests read record by record); the size is not bounded. */
export async function openRegularFileStream(
  path: string,
  start: number,
  shownAs?: string,
): Promise<Readable> {
  const { handle } = await openRegularFile(path, { maxBytes: Number.POSITIVE_INFINITY, shownAs });
  return handle.createReadStream({ start, highWaterMark: 256 * 1024, autoClose: true });
}

/**
 * Reads a stream (standard input) up to `maxBytes`, and stops there: more is refused, and an endless
 * stream (`yes | opflow call ... --body -`) is not read further.
 */
export async function readBoundedStream(
  stream: AsyncIterable<Uint8Array | string> & { destroy?: () => void },
  options: BoundedReadOptions,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk);
    chunks.push(bytes);
    size += bytes.byteLength;
    if (size > options.maxBytes) {
      stream.destroy?.();
      throw new FileRefused(options.shownAs ?? 'standard input', tooLarge(size, options.maxBytes, true));
    }
  }
  return Buffer.concat(chunks, size);
}

/** `too large (3 MB; at most 2 MB)`. */
export function tooLarge(bytes: number, maxBytes: number, atLeast = false): string {
  return `too large (${atLeast ? 'over ' : ''}${formatBytes(atLeast ? maxBytes : bytes)}; at most ${formatBytes(maxBytes)})`;
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MB`;
  // Just over a limit of whole MB ("4.0 MB; at most 4 MB" reads as no excess): in KB instead.
  const megabytes = (bytes / 1024 / 1024).toFixed(1);
  if (bytes >= 1024 * 1024 && megabytes.endsWith('.0'))
    return `${Math.ceil(bytes / 1024).toLocaleString('en')} KB`;
  if (bytes >= 1024 * 1024) return `${megabytes} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}
