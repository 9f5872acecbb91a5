/**
 * A batch source on this machine: the manifest file read from a byte offset, the documents it names
 * relative to its folder, or the documents of a folder. Every read follows the bounded-read rule
 * (regular files only, a size limit), and a document is read only when its real path (symbolic
 * links followed) is inside the manifest's folder.
 */
import { realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { BatchSource, BatchSourceKind } from '../engine/batch-store';
import { describeFileError, FileRefused, openRegularFile, readRegularFile } from '../files/bounded-read';
import { maxDocumentBytes } from './documents';
import { manifestKindOf } from './inbox';
import { IngestRefused, type IngestSource } from './ingest';
import { openFile, readFolder } from './sources';

export function localIngestSource(source: BatchSource): IngestSource {
  const base = source.kind === 'folder' ? source.uri : dirname(source.uri);
  return {
    source,
    openBytes: source.kind === 'jsonl' || source.kind === 'csv' ? openFile(source.uri) : undefined,
    listDocuments: source.kind === 'folder' ? (skip) => readFolder(source.uri, skip) : undefined,
    readDocument: async (relativePath) => {
      const path = await insideFolder(base, relativePath, source.kind === 'folder' ? 'folder' : 'manifest');
      return new Uint8Array(
        await readRegularFile(path, { maxBytes: maxDocumentBytes, shownAs: relativePath }),
      );
    },
  };
}

/** `relativePath` under `folder`, refused unless its real path is inside the folder's real path. */
export async function insideFolder(
  folder: string,
  relativePath: string,
  what: 'manifest' | 'folder',
): Promise<string> {
  const place = what === 'manifest' ? "the manifest's folder" : 'the folder';
  if (isAbsolute(relativePath)) throw new FileRefused(relativePath, `must be a path inside ${place}`);
  const path = resolve(folder, relativePath);
  let real: string;
  let realFolder: string;
  try {
    [real, realFolder] = await Promise.all([realpath(path), realpath(folder)]);
  } catch (error) {
    throw new FileRefused(relativePath, describeFileError(error), (error as NodeJS.ErrnoException).code);
  }
  const inside = relative(realFolder, real);
  if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside))
    throw new FileRefused(relativePath, `is outside ${place} (${realFolder}); only files inside it are read`);
  return real;
}

/**
 * The source kind of a local path: a folder, a JSON Lines manifest or a CSV one; anything else (a
 * FIFO, a device, another extension) is refused with the reason, before anything is read.
 */
export async function localSourceKind(path: string, shownAs = path): Promise<BatchSourceKind> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new IngestRefused(
      `${shownAs}: ${code === 'ENOENT' ? 'no such file or folder' : describeFileError(error)}`,
    );
  }
  if (info.isDirectory()) return 'folder';
  const kind = manifestKindOf(path);
  if (!kind)
    throw new IngestRefused(
      `${shownAs}: a manifest is a JSON Lines file (.jsonl, .ndjson) or a CSV file (.csv, .tsv), or give a folder of documents`,
    );
  try {
    const { handle } = await openRegularFile(path, { maxBytes: Number.POSITIVE_INFINITY, shownAs });
    await handle.close();
  } catch (error) {
    throw new IngestRefused(
      error instanceof FileRefused ? error.message : `${shownAs}: ${describeFileError(error)}`,
    );
  }
  return kind;
}
