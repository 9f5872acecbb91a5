/**
 * The document extractors as the Lambda bundles load them: shared/ingest/documents.ts built with
 * the functions' esbuild settings (mammoth and unpdf aliased to their stubs) and the extractor files
 * beside it (infra/lambda/build-extractors.mjs), imported by Node as Lambda would: a .docx and a
 * .pdf are read through the files, which the bundle itself does not hold.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Document, Packer, Paragraph } from 'docx';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocumentExtractors } from '../../../infra/lambda/build-extractors.mjs';
import {
  ESM_REQUIRE_BANNER,
  functionAliases,
  MAIN_FIELDS,
  PROJECT_ROOT,
} from '../../../infra/lib/function-bundling';
import type { extractDocument as ExtractDocument } from '../../../shared/ingest/documents';
import { REAL_PROCESS_TIMEOUT_MS } from '../../support/timeouts';

/** A one-page PDF whose page shows `text` (Helvetica), with a correct cross-reference table. */
function pdfWithText(text: string): Uint8Array {
  const content = `BT /F1 18 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(body.length);
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(body);
}

let dir: string;
let bundle: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'opflow-extractors-'));
  bundle = path.join(dir, 'index.mjs');
  await build({
    // The extraction runs in a child process, document-extractor.mjs beside the bundle (as in the asset).
    entryPoints: {
      index: path.join(PROJECT_ROOT, 'shared/ingest/documents.ts'),
      'document-extractor': path.join(PROJECT_ROOT, 'shared/ingest/document-extractor.ts'),
    },
    bundle: true,
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    // As the functions are built (function-bundling.ts): code imported on first use is a chunk.
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    minify: true,
    mainFields: MAIN_FIELDS,
    banner: { js: ESM_REQUIRE_BANNER },
    alias: functionAliases(),
    logLevel: 'warning',
  });
  await buildDocumentExtractors(dir, { target: `node${process.versions.node.split('.')[0]}` });
}, REAL_PROCESS_TIMEOUT_MS);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Loading pdf.js (1.6 MiB) and mammoth on a loaded machine: the limit of tests that run real code.
describe('the document extractors of the Lambda bundles', { timeout: REAL_PROCESS_TIMEOUT_MS }, () => {
  it('are files beside the bundle, not in it', () => {
    expect(readdirSync(path.join(dir, 'extractors')).sort()).toEqual(['mammoth.mjs', 'unpdf.mjs']);
    const code = readFileSync(bundle, 'utf8');
    // pdf.js and mammoth's own code stay out of the bundle (a few KiB of our own remain).
    expect(code.length).toBeLessThan(50_000);
    expect(code).not.toContain('getTextContent');
  });

  it('read a .docx and a .pdf through those files', async () => {
    const { extractDocument } = (await import(pathToFileURL(bundle).href)) as {
      extractDocument: typeof ExtractDocument;
    };
    const docx = await Packer.toBuffer(
      new Document({ sections: [{ children: [new Paragraph('A hinge with a damper')] }] }),
    );
    await expect(extractDocument('disclosure.docx', new Uint8Array(docx))).resolves.toEqual({
      kind: 'text',
      text: expect.stringContaining('A hinge with a damper'),
    });
    await expect(extractDocument('disclosure.pdf', pdfWithText('A folding bicycle frame'))).resolves.toEqual({
      kind: 'text',
      text: expect.stringContaining('A folding bicycle frame'),
    });
  });
});
