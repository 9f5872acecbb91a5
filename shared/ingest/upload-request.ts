/**
 * The body of a manifest, or of documents, uploaded to start a batch (POST /batch-uploads and its
 * /check), shared by the routes (shared/dashboard/start-routes.ts, runtime/lambda/upload-routes.ts)
 * and the job API's OpenAPI description.
 */
import * as z from 'zod';
import { tenantNameSchema } from '../engine/job-commands';
import { batchNameSchema } from './batch';

export const manifestUploadBodySchema = z.strictObject({
  fileName: z
    .string()
    .regex(
      /^[\w][\w .-]{0,99}\.(jsonl|ndjson|csv|tsv)$/i,
      'must be the name of a .jsonl, .ndjson, .csv or .tsv file',
    ),
  manifest: z
    .string()
    .min(1, 'the manifest is empty')
    .describe("the manifest file's text (.jsonl, .ndjson, .csv or .tsv lines)"),
  workflow: z.string().min(1),
  batchName: batchNameSchema.optional(),
  selection: z.enum(['auto', 'manual']).default('auto'),
  failureBudget: z.string().max(20).optional(),
  maxUnits: z.number().int().positive().optional(),
  tenant: tenantNameSchema.default('default'),
});

/**
 * An uploaded document's name: a file name of its own (no folder), kept as is in the batch's folder.
 * Its type is judged as `opflow ingest <folder>` judges it: one it cannot read is a problem of the
 * batch (named with the reason), not a refusal of the upload.
 */
export const uploadedDocumentPattern = /^\w[\w .()+,-]{0,119}$/;

/** An uploaded document's name, as both bodies that name documents take it. */
const documentName = z
  .string()
  .regex(
    uploadedDocumentPattern,
    'must be a file name of letters, digits, spaces and . ( ) + , - _ (at most 120)',
  );

/**
 * Documents uploaded to become a batch, one item each (as `opflow ingest <folder>` reads a folder):
 * each its file name and its bytes in base64. The request body's limit (1 MiB) bounds them together.
 */
export const documentsUploadBodySchema = z.strictObject({
  documents: z
    .array(
      z.strictObject({
        name: documentName,
        content: z
          .string()
          .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be the document in base64')
          .describe("the document's bytes in base64"),
      }),
    )
    .min(1, 'choose at least one document')
    .max(200, 'at most 200 documents at once (more: opflow ingest <folder>)'),
  workflow: z.string().min(1),
  batchName: batchNameSchema.optional(),
  selection: z.enum(['auto', 'manual']).default('auto'),
  failureBudget: z.string().max(20).optional(),
  maxUnits: z.number().int().positive().optional(),
  tenant: tenantNameSchema.default('default'),
});

/** The document types the page takes (as `opflow ingest <folder>` reads them; images for workflows that take them). */
export const uploadedDocumentExtensions = [
  '.docx',
  '.pdf',
  '.txt',
  '.md',
  '.json',
  '.png',
  '.jpg',
  '.jpeg',
] as const;
/** One document sent by a presigned PUT: at most what the ingest reads of a document (documents.ts' maxDocumentBytes). */
export const maxUploadedDocumentBytes = 50 * 1024 * 1024;
/** All the documents of one presigned upload together. */
export const maxUploadedDocumentsBytes = 1024 * 1024 * 1024;
/** Documents in one upload. */
export const maxUploadedDocuments = 200;

const mib = (bytes: number) => `${bytes / 1024 / 1024} MiB`;

/**
 * Documents to send by presigned PUTs (the AWS job API): each its name, size and SHA-256, the bytes
 * going straight to S3. A refusal names the document (`body.documentFiles[2].size: hinge.pdf is ...`).
 */
export const documentFilesUploadBodySchema = z
  .strictObject({
    documentFiles: z
      .array(
        z.strictObject({
          name: documentName,
          size: z.number().int().nonnegative(),
          sha256: z
            .string()
            .regex(/^[0-9a-f]{64}$/, 'must be the SHA-256 of the document, 64 lowercase hex digits'),
        }),
      )
      .min(1, 'choose at least one document')
      .max(
        maxUploadedDocuments,
        `at most ${maxUploadedDocuments} documents at once (more: opflow ingest <folder>)`,
      ),
    workflow: z.string().min(1),
    batchName: batchNameSchema.optional(),
    selection: z.enum(['auto', 'manual']).default('auto'),
    failureBudget: z.string().max(20).optional(),
    maxUnits: z.number().int().positive().optional(),
    tenant: tenantNameSchema.default('default'),
  })
  .superRefine((body, context) => {
    const seen = new Set<string>();
    let total = 0;
    for (const [index, file] of body.documentFiles.entries()) {
      const at = (field: string, message: string) =>
        context.addIssue({ code: 'custom', path: ['documentFiles', index, field], message });
      const extension = /\.[^.]+$/.exec(file.name)?.[0]?.toLowerCase() ?? '';
      if (!(uploadedDocumentExtensions as readonly string[]).includes(extension))
        at(
          'name',
          `${file.name}: not a document type the batch reads (${uploadedDocumentExtensions.join(', ')})`,
        );
      if (file.size === 0) at('size', `${file.name} is empty`);
      if (file.size > maxUploadedDocumentBytes)
        at(
          'size',
          `${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MiB; a document may be at most ${mib(maxUploadedDocumentBytes)}`,
        );
      const key = file.name.toLowerCase();
      if (seen.has(key)) at('name', `${file.name} is there twice; each document once`);
      seen.add(key);
      total += file.size;
    }
    if (total > maxUploadedDocumentsBytes)
      context.addIssue({
        code: 'custom',
        path: ['documentFiles'],
        message: `the documents are ${Math.ceil(total / 1024 / 1024)} MiB together; at most ${mib(maxUploadedDocumentsBytes)} at once (more: opflow ingest <folder>)`,
      });
  });

/** Either body of POST /batch-uploads and its /check. */
export const batchUploadBodySchema = z.union([
  manifestUploadBodySchema,
  documentsUploadBodySchema,
  documentFilesUploadBodySchema,
]);
