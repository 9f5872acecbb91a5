/**
 * The child process that reads one .docx or .pdf (documents.ts starts it under a memory and time
 * budget): the document's bytes on standard input, the extension as its argument; it answers one
 * JSON line on standard output, `{"text": ...}` or `{"problem": ...}`. Built beside the CLI's and the
 * ingest function's bundles as `document-extractor.(m)js`.
 */
import { DocumentProblem, extractRawText } from './documents';

async function main(): Promise<void> {
  const extension = process.argv[2] ?? '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  let answer: { text: string } | { problem: string };
  try {
    answer = { text: await extractRawText(extension, Buffer.concat(chunks)) };
  } catch (error) {
    answer = {
      problem:
        error instanceof DocumentProblem ? error.message : `cannot read the document: ${String(error)}`,
    };
  }
  process.stdout.write(JSON.stringify(answer), () => process.exit(0));
}

void main();
