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

/**
 * Documents uploaded to become a batch, one item each (as `opflow ingest <folder>` reads a folder):
 * each its file name and its bytes in base64. The request body's limit (1 MiB) bounds them together.
 */
export const documentsUploadBodySchema = z.strictObject({
  documents: z
    .array(
      z.strictObject({
        name: z
          .string()
          .regex(
            uploadedDocumentPattern,
            'must be a file name of letters, digits, spaces and . ( ) + , - _ (at most 120)',
          ),
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

/** Either body of POST /batch-uploads and its /check. */
export const batchUploadBodySchema = z.union([manifestUploadBodySchema, documentsUploadBodySchema]);
