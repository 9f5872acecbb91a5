/**
 * The local ReportStore: plain files under an output folder, where a person can open them. A key
 * `reports/<jobId>/<path>` is the file `<out>/<jobId>/<path>`; any other key lives out of the way
 * under `<out>/.opflow/objects/`. Writes go to a temporary file that is then renamed, so a reader
 * (or a crash) never sees half a report.
 */
import { randomUUID } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReportStore, StoredObject } from '../../engine/ports';

export interface FileReportStoreOptions {
  /** The output folder. Default: `./opflow-out`, resolved against the current directory. */
  outDir?: string | undefined;
}

/** Content types implied by a file's extension; only a different type needs to be written down. */
const typeByExtension: Readonly<Record<string, string>> = {
  '.json': 'application/json',
  '.md': 'text/markdown; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.xml': 'application/xml',
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.svg': 'image/svg+xml',
  '.zip': 'application/zip',
};
const fallbackType = 'application/octet-stream';

const reportsPrefix = 'reports/';
/** A batch's outputs (summary.csv, index.html...) live in plain sight too, under `<out>/batches/`. */
const batchesPrefix = 'batches/';
/** `batches/<batchId>/<file>`, but not the inputs of large items kept out of sight. */
const isBatchOutput = (key: string) => key.startsWith(batchesPrefix) && !key.includes('/inputs/');
/** The folder (inside the output folder) for everything that is not a job's report file. */
const internalDir = '.opflow';

/** Thrown for a key that cannot name a file safely. */
export class InvalidReportKeyError extends Error {
  override readonly name = 'InvalidReportKeyError';
}

export class FileReportStore implements ReportStore {
  /** The absolute output folder. */
  readonly outDir: string;

  constructor(options: FileReportStoreOptions = {}) {
    this.outDir = resolve(options.outDir ?? 'opflow-out');
  }

  async put(key: string, body: Uint8Array | string, contentType: string): Promise<void> {
    const path = this.#pathOf(key);
    await writeAtomically(path, typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
    const typePath = this.#typePathOf(key);
    if (contentType === impliedType(key)) await rm(typePath, { force: true });
    else await writeAtomically(typePath, Buffer.from(contentType, 'utf8'));
  }

  async putStream(key: string, body: AsyncIterable<Uint8Array | string>, contentType: string): Promise<void> {
    const path = this.#pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = join(dirname(path), `.tmp-${randomUUID()}`);
    try {
      await pipeline(Readable.from(asBuffers(body)), createWriteStream(temporary));
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    const typePath = this.#typePathOf(key);
    if (contentType === impliedType(key)) await rm(typePath, { force: true });
    else await writeAtomically(typePath, Buffer.from(contentType, 'utf8'));
  }

  /**
   * The object, or undefined when there is none. Only a regular file whose real path (symbolic
   * links resolved) lies inside its own folder is read: a link planted in a job's folder (to
   * /etc/passwd, or to another job's report) reads as missing, and so do a FIFO or a device.
   */
  async get(key: string): Promise<StoredObject | undefined> {
    const path = this.#pathOf(key);
    const body = await readContainedFile(path, this.outDir, this.#rootOf(key));
    if (body === undefined) return undefined;
    let contentType = impliedType(key);
    const written = await readContainedFile(
      this.#typePathOf(key),
      this.outDir,
      join(this.outDir, internalDir, 'types'),
    );
    // A content type is one short line; anything else there is not one this store wrote.
    const shown = written?.toString('utf8').trim();
    if (shown && shown.length <= 200 && /^[\x20-\x7e]+$/.test(shown)) contentType = shown;
    return { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), contentType };
  }

  /** Every key that starts with `prefix`, sorted. */
  async list(prefix: string): Promise<string[]> {
    const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/') + 1) : '';
    const roots: { dir: string; keyPrefix: string }[] = [];
    if (folder === '') {
      roots.push({ dir: this.outDir, keyPrefix: reportsPrefix });
      roots.push({ dir: join(this.outDir, internalDir, 'objects'), keyPrefix: '' });
    } else {
      checkKey(`${folder}x`, { partial: true });
      const dir = folder.startsWith(reportsPrefix)
        ? join(this.outDir, ...folder.slice(reportsPrefix.length).split('/'))
        : isBatchOutput(folder)
          ? join(this.outDir, ...folder.split('/'))
          : join(this.outDir, internalDir, 'objects', ...folder.split('/'));
      roots.push({ dir, keyPrefix: folder });
    }
    const keys: string[] = [];
    for (const root of roots) {
      for (const relative of await walk(root.dir)) keys.push(root.keyPrefix + relative);
    }
    return keys.filter((key) => key.startsWith(prefix)).sort();
  }

  /** The absolute path of the file (whether it exists yet or not); `ttlSeconds` does not apply locally. */
  async link(key: string, _ttlSeconds?: number): Promise<string> {
    return this.#pathOf(key);
  }

  #pathOf(key: string): string {
    checkKey(key);
    if (key.startsWith(reportsPrefix))
      return join(this.outDir, ...key.slice(reportsPrefix.length).split('/'));
    if (isBatchOutput(key)) return join(this.outDir, ...key.split('/'));
    return join(this.outDir, internalDir, 'objects', ...key.split('/'));
  }

  /** The folder a key's file must stay inside: its job's folder, or the internal objects folder. */
  #rootOf(key: string): string {
    if (key.startsWith(reportsPrefix))
      return join(this.outDir, key.slice(reportsPrefix.length).split('/')[0]!);
    if (isBatchOutput(key)) return join(this.outDir, 'batches', key.split('/')[1]!);
    return join(this.outDir, internalDir, 'objects');
  }

  #typePathOf(key: string): string {
    return join(this.outDir, internalDir, 'types', ...key.split('/'));
  }
}

/**
 * Keys are `/`-separated relative paths: no empty, `.` or `..` segment, no segment starting with a
 * dot (those names are the store's own), no backslash or control character.
 */
function checkKey(key: string, options: { partial?: boolean } = {}): void {
  const segments = key.split('/');
  const bad = (reason: string) =>
    new InvalidReportKeyError(`invalid report key ${JSON.stringify(key)}: ${reason}`);
  if (key.length === 0 || key.length > 1024) throw bad('must be 1 to 1024 characters');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused.
  if (/[\\\u0000-\u001f\u007f]/.test(key)) throw bad('backslashes and control characters are not allowed');
  for (const segment of segments) {
    if (segment.length === 0) throw bad('empty path segment');
    if (segment.startsWith('.')) throw bad('a path segment may not start with a dot');
  }
  if (!options.partial && key.startsWith(reportsPrefix) && segments.length < 3) {
    throw bad('expected reports/<jobId>/<name>');
  }
}

/** The file's bytes if it is a regular file inside `root` once real paths are resolved; else undefined. */
async function readContainedFile(path: string, outDir: string, root: string): Promise<Buffer | undefined> {
  let realOut: string;
  let realRoot: string;
  let realFile: string;
  try {
    [realOut, realRoot, realFile] = await Promise.all([realpath(outDir), realpath(root), realpath(path)]);
  } catch (error) {
    if (isMissing(error) || isNotDirectory(error) || (error as NodeJS.ErrnoException).code === 'ELOOP')
      return undefined;
    throw error;
  }
  // The folder itself must not be a link either (a job folder pointing at another job's).
  if (realRoot !== join(realOut, relative(outDir, root))) return undefined;
  if (!realFile.startsWith(`${realRoot}${sep}`)) return undefined;
  // Opened without following a link swapped in since, then checked on the open descriptor.
  let handle: import('node:fs/promises').FileHandle;
  try {
    handle = await open(realFile, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

function impliedType(key: string): string {
  return typeByExtension[extname(key).toLowerCase()] ?? fallbackType;
}

async function writeAtomically(path: string, body: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `.tmp-${randomUUID()}`);
  try {
    await writeFile(temporary, body);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Relative `/`-separated paths of the files below `dir`, skipping dot entries. */
async function walk(dir: string): Promise<string[]> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error) || isNotDirectory(error)) return [];
    throw error;
  }
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    if (entry.isDirectory()) {
      for (const inner of await walk(join(dir, entry.name))) files.push(`${entry.name}/${inner}`);
    } else if (entry.isFile()) {
      files.push(entry.name);
    }
  }
  return files.map((file) => file.split(sep).join('/'));
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

function isNotDirectory(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOTDIR';
}

async function* asBuffers(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<Buffer> {
  for await (const chunk of body)
    yield typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
}
