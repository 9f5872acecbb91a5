/**
 * A batch source on this machine: the manifest file read from a byte offset, the documents it names
 * relative to its folder, or the documents of a folder.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { BatchSource } from '../engine/batch-store';
import type { IngestSource } from './ingest';
import { openFile, readFolder } from './sources';

export function localIngestSource(source: BatchSource): IngestSource {
  const base = source.kind === 'folder' ? source.uri : dirname(source.uri);
  return {
    source,
    openBytes: source.kind === 'jsonl' || source.kind === 'csv' ? openFile(source.uri) : undefined,
    listDocuments: source.kind === 'folder' ? (skip) => readFolder(source.uri, skip) : undefined,
    readDocument: async (relativePath) => new Uint8Array(await readFile(join(base, relativePath))),
  };
}
