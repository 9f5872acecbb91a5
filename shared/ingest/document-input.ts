/**
 * A document named by a manifest line (or found in a folder) turned into a workflow's input: an image
 * for a workflow that takes images, a .json document's fields, or a document's text read as a
 * disclosure form. Kept apart from the line reader (ingest-item.ts) so that what previews a manifest
 * alone (the dashboard's upload check) loads no document extractor.
 */
import { errorMessage } from '../errors/error-message';
import { disclosureInput, disclosureLabel, loadDisclosureParsers } from './disclosure-form';
import { DocumentProblem, extractDocument } from './documents';
import type { DocumentInputReader } from './ingest-item';

/** Reads `file` (its `bytes`) into `workflow`'s input, the line's own `fields` over it. */
export const readDocumentInput: DocumentInputReader = async ({
  workflow,
  id,
  file,
  bytes,
  fields,
  disclosureForm,
}) => {
  try {
    // An image (a product photo) is the input of a workflow that takes images, judged by its schema.
    if (workflow.fromImage && /\.(png|jpe?g)$/i.test(file))
      return {
        candidate: {
          ...(workflow.fromImage(bytes, file.split(/[\\/]/).at(-1) ?? file) as Record<string, unknown>),
          ...fields,
        },
      };
    const document = await extractDocument(file, bytes);
    if (document.kind === 'json') return { candidate: { ...document.value, ...fields } };
    if (!workflow.fromText) return { problem: `${workflow.name} takes JSON input, not the text of ${file}` };
    // A disclosure form's front matter stays with the job (metadata), never in its input.
    await loadDisclosureParsers();
    const read = disclosureInput(workflow, document.text, file, disclosureForm);
    const docket = read.metadata?.docket;
    return {
      candidate: { ...(read.input as Record<string, unknown>), ...fields },
      metadata: read.metadata,
      label: typeof docket === 'string' ? disclosureLabel(id, read.metadata) : undefined,
    };
  } catch (error) {
    return {
      problem: `file: ${file}: ${error instanceof DocumentProblem ? error.message : errorMessage(error)}`,
    };
  }
};
