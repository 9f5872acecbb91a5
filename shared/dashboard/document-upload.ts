/**
 * Documents uploaded from the dashboard to become a batch on `opflow serve`, one item each, as
 * `opflow ingest <folder>` reads a folder: the check reads every document as `opflow ingest
 * --dry-run` does (the .docx and .pdf extracted under the same budget, a disclosure form's fields
 * read) from memory and estimates the cost, storing nothing; the start keeps them under
 * `uploads/<content hash>/documents/` beside the database and ingests that folder. A document that
 * cannot be used is a problem named with its file and reason; the others go on. The same documents
 * again are the same batch, started once.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as z from 'zod';
import type { BatchSource, BatchStore } from '../engine/batch-store';
import type { JobDeps } from '../engine/deps';
import { FileRefused } from '../files/bounded-read';
import { ApiError } from '../http/job-api';
import { batchIdFor, sha256 } from '../ingest/batch';
import { estimateBatch } from '../ingest/estimate';
import { IngestRefused, type IngestRequest, type IngestSource, previewIngest } from '../ingest/ingest';
import type { documentsUploadBodySchema } from '../ingest/upload-request';
import { uploadRequestOf } from './upload-check';

export type DocumentsBody = z.infer<typeof documentsUploadBodySchema>;

/** Documents ready to check or start: their folder, request, in-memory reader and batch id. */
export interface PreparedDocuments {
  files: { name: string; bytes: Buffer }[];
  source: BatchSource;
  request: IngestRequest;
  inMemory: IngestSource;
  batchId: string;
}

/** The checker of documents uploaded to the server whose uploads folder is `uploadsFolder`. */
export function documentsChecker(options: { deps: JobDeps; batches: BatchStore; uploadsFolder: string }) {
  const { deps, batches } = options;

  const prepare = (body: DocumentsBody, boundTenant: string | undefined): PreparedDocuments => {
    const { tenant, options: batchOptions } = uploadRequestOf(deps, body, boundTenant);
    const seen = new Set<string>();
    const files = body.documents.map((document, index) => {
      const key = document.name.toLowerCase();
      if (seen.has(key))
        throw new ApiError(
          400,
          'invalid-request',
          `body.documents[${index}].name: ${document.name} is there twice; each document once`,
        );
      seen.add(key);
      return { name: document.name, bytes: Buffer.from(document.content, 'base64') };
    });
    files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // The same names and contents are the same folder, so the same batch.
    const hash = sha256(
      files
        .map((file) => `${file.name}\n${createHash('sha256').update(file.bytes).digest('hex')}`)
        .join('\n'),
    );
    const source: BatchSource = {
      kind: 'folder',
      uri: join(options.uploadsFolder, hash.slice(0, 16), 'documents'),
    };
    const request: IngestRequest = {
      batchName: body.batchName,
      tenant,
      workflow: body.workflow,
      options: batchOptions,
    };
    const byName = new Map(files.map((file) => [file.name, file.bytes]));
    const inMemory: IngestSource = {
      source,
      listDocuments: (skip) =>
        (async function* () {
          for (const [index, file] of files.entries()) {
            if (index + 1 > skip) yield { record: index + 1, position: file.name, document: file.name };
          }
        })(),
      readDocument: async (name) => {
        const bytes = byName.get(name);
        if (!bytes) throw new FileRefused(name, 'was not uploaded');
        return new Uint8Array(bytes);
      },
    };
    return { files, source, request, inMemory, batchId: batchIdFor(source, tenant, body.batchName) };
  };

  /** Every document read and the cost estimated; nothing stored. */
  const check = async (body: DocumentsBody, tenant: string | undefined) => {
    const prepared = prepare(body, tenant);
    const preview = await previewIngest({ engine: deps, batches }, prepared.inMemory, prepared.request).catch(
      (error) => {
        if (error instanceof IngestRefused) throw new ApiError(400, 'invalid-request', error.message);
        throw error;
      },
    );
    const estimate = await estimateBatch(deps.store, deps.workflows, preview.toRun);
    return { prepared, preview, estimate };
  };

  /** The checked documents written to their folder (the batch's source, read again on a redrive). */
  const keep = async (prepared: PreparedDocuments) => {
    await mkdir(prepared.source.uri, { recursive: true });
    for (const file of prepared.files) await writeFile(join(prepared.source.uri, file.name), file.bytes);
  };

  return { check, keep };
}
