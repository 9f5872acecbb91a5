/**
 * Documents a browser sends straight to the report bucket by presigned PUTs (the AWS job API's
 * `POST /batch-uploads` with `documentFiles`), laid out as `opflow ingest <manifest>` lays out a
 * manifest and the documents its lines name (pure; the api does the I/O):
 *
 *   inbox/[tenants/<tenant>/]<workflow>/<batch>/<document>               each document, metadata
 *                                                                        `opflow-role: manifest-file`
 *   inbox/[tenants/<tenant>/]<workflow>/<batch>/opflow-documents.jsonl   written last, by the commit
 *
 * A document's arrival starts nothing (inbox.ts: a file for a manifest to name). The commit
 * (`POST /batch-uploads/commit`) looks every document up in the bucket, and only when all are there
 * with their size (and SHA-256 where the store reports it) writes the manifest: one line
 * `{"id": <name>, "file": <name>}` per document, which is the item a folder's document is (same id,
 * same input), so the ingest function opens the batch once, with every document there, exactly as
 * for `opflow ingest`'s manifests. The same documents again are the same manifest and batch, started once.
 */
import type * as z from 'zod';
import type { BatchOptions } from '../engine/batch-store';
import { batchIdFor, sha256 } from './batch';
import { inboxFolderOf, inboxMetadataFor } from './inbox';
import type { documentFilesUploadBodySchema } from './upload-request';

export type DocumentFilesBody = z.infer<typeof documentFilesUploadBodySchema>;

/** The manifest the commit writes beside the documents (a name no document can take: .jsonl is not a document type). */
export const documentsManifestName = 'opflow-documents.jsonl';

export interface DocumentFilesPlan {
  batchId: string;
  folder: string;
  /** The documents in name order, each with its key. */
  files: { name: string; size: number; sha256: string; key: string }[];
  /** Every document's object metadata: the batch's, and the role that keeps its arrival from starting anything. */
  documentMetadata: Record<string, string>;
  manifestKey: string;
  manifestText: string;
  manifestMetadata: Record<string, string>;
}

/** Where the documents of `body` go for `tenant` (already the bound tenant's when the caller has one). */
export function documentFilesPlan(
  body: Pick<DocumentFilesBody, 'documentFiles' | 'workflow' | 'batchName'>,
  tenant: string,
  options: BatchOptions,
): DocumentFilesPlan {
  const sorted = [...body.documentFiles].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // The same names and contents are the same batch (as on opflow serve's documents upload).
  const hash = sha256(sorted.map((file) => `${file.name}\n${file.sha256}`).join('\n'));
  const batchId =
    body.batchName ?? batchIdFor({ kind: 'folder', uri: `upload/${hash.slice(0, 16)}/documents` }, tenant);
  const folder = inboxFolderOf(tenant, body.workflow, batchId);
  const metadata = inboxMetadataFor(tenant, batchId, options);
  return {
    batchId,
    folder,
    files: sorted.map((file) => ({ ...file, key: `${folder}${file.name}` })),
    documentMetadata: { ...metadata, 'opflow-role': 'manifest-file' },
    manifestKey: `${folder}${documentsManifestName}`,
    manifestText: `${sorted.map((file) => JSON.stringify({ id: file.name, file: file.name })).join('\n')}\n`,
    manifestMetadata: metadata,
  };
}

/** What the bucket holds under a document's key (HeadObject), or undefined when nothing. */
export interface StoredDocument {
  size: number | undefined;
  /** The object's SHA-256 in base64, when the store reports it. */
  checksumSha256?: string | undefined;
  metadata: Record<string, string>;
}

/** Why a stored document is not the one planned, or undefined when it is. */
export function documentMismatch(
  planned: DocumentFilesPlan['files'][number],
  stored: StoredDocument | undefined,
  metadata: Record<string, string>,
): string | undefined {
  if (!stored) return 'not uploaded yet';
  if (stored.size !== planned.size)
    return `${stored.size ?? 'unknown'} bytes stored, ${planned.size} announced`;
  const expected = Buffer.from(planned.sha256, 'hex').toString('base64');
  if (stored.checksumSha256 !== undefined && stored.checksumSha256 !== expected)
    return 'its SHA-256 is not the one announced';
  for (const [name, value] of Object.entries(metadata))
    if (stored.metadata[name] !== value) return `its ${name} metadata is not this upload's`;
  return undefined;
}
