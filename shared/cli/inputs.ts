/**
 * Reading the inputs of `opflow run`: text (.txt), Markdown (.md), JSON (.json), Word (.docx) and PDF
 * (.pdf) files, images (.png, .jpg, .jpeg) for a workflow that takes them, folders of them, or `-` for
 * standard input. A .docx or .pdf is read as `opflow
 * ingest` reads it (shared/ingest/documents.ts: in a child process under a memory and time budget; a
 * .docx's label/value tables become `Label: value` lines of the disclosure form). A file that cannot
 * be used is reported with its path and the reason, and the others still run.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { errorMessage } from '../errors/error-message';
import { describeFileError, readRegularFile, tooLarge } from '../files/bounded-read';
import { DocumentProblem, extractDocument, maxDocumentBytes } from '../ingest/documents';

export type InputKind = 'text' | 'markdown' | 'json' | 'image';

export interface InputDocument {
  /** As the user named it (a path, or `-`), for messages. */
  source: string;
  /** The file's name (`stdin` for `-`), used for titles and labels. */
  fileName: string;
  kind: InputKind;
  /** The text, or for JSON the parsed value (empty for an image). */
  content: string;
  json?: unknown;
  /** An image's bytes (PNG or JPEG: checked by the workflow's input schema, never logged). */
  bytes?: Uint8Array;
}

export interface InputProblem {
  source: string;
  reason: string;
}

const kindByExtension: Readonly<Record<string, InputKind>> = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.txt': 'text',
  '.text': 'text',
  '.json': 'json',
};

/** Documents whose text is extracted (as `opflow ingest` does) before they are read as Markdown. */
const extractedExtensions: ReadonlySet<string> = new Set(['.docx', '.pdf']);
const usableExtension = (name: string) => {
  const extension = extname(name).toLowerCase();
  return kindByExtension[extension] !== undefined || extractedExtensions.has(extension);
};

/** The largest input file read (a disclosure is a few pages; this guards against a wrong path). */
export const maxInputBytes = 2 * 1024 * 1024;

/** Image files, read as images by workflows that take them (the design workflows); the platform's limit is 4,096 KB. */
const imageExtensions: ReadonlySet<string> = new Set(['.png', '.jpg', '.jpeg']);
const maxImageFileBytes = 4096 * 1024;

export interface ReadInputsOptions {
  /** Reads standard input (for `-`), stopping once more than `maxBytes` bytes have come. */
  readStdin: (maxBytes?: number) => Promise<string>;
  /** Relative paths are resolved against this. Default: the current directory. */
  cwd?: string | undefined;
  /** Read .png, .jpg and .jpeg files as images (for a workflow that takes them). Default: false. */
  images?: boolean | undefined;
}

/** Reads every input in order; folders give their usable files sorted by name (not recursing). */
export async function readInputs(
  sources: readonly string[],
  options: ReadInputsOptions,
): Promise<{ documents: InputDocument[]; problems: InputProblem[]; skipped: string[] }> {
  const documents: InputDocument[] = [];
  const problems: InputProblem[] = [];
  /** Files in a given folder that are not inputs (a PDF beside the disclosures): named, not refused. */
  const skipped: string[] = [];
  const seen = new Set<string>();
  let stdinUsed = false;
  const keep = (read: InputDocument | InputProblem) => {
    if ('reason' in read) problems.push(read);
    else documents.push(read);
  };
  const addFile = async (source: string, path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    keep(await readFileInput(source, path, options));
  };

  for (const source of sources) {
    if (source === '-') {
      keep(
        stdinUsed
          ? { source, reason: 'standard input can be read only once' }
          : await readStdinInput(options),
      );
      stdinUsed = true;
      continue;
    }
    const path = resolve(options.cwd ?? process.cwd(), source);
    try {
      const info = await stat(path);
      if (!info.isDirectory()) {
        await addFile(source, path);
        continue;
      }
      const folder = await listFolder(source, path, options);
      skipped.push(...folder.skipped);
      if ('reason' in folder) problems.push({ source: folder.source, reason: folder.reason });
      else for (const name of folder.names) await addFile(join(source, name), join(path, name));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      problems.push({
        source,
        reason: code === 'ENOENT' ? 'no such file or folder' : describeFileError(error),
      });
    }
  }
  return { documents, problems, skipped };
}

/** Whether a file is read as an image (only where the workflow takes images). */
const isImageInput = (name: string, options: ReadInputsOptions) =>
  options.images === true && imageExtensions.has(extname(name).toLowerCase());

/** Standard input, under a file's limit (the reading stops there: `yes | opflow run ... -` ends). */
async function readStdinInput(options: ReadInputsOptions): Promise<InputDocument | InputProblem> {
  const text = await options.readStdin(maxInputBytes + 1);
  const size = Buffer.byteLength(text, 'utf8');
  if (size > maxInputBytes) return { source: '-', reason: tooLarge(size, maxInputBytes, true) };
  const kind: InputKind = /^\s*[[{]/.test(text) ? 'json' : 'markdown';
  return parseDocument('-', 'stdin', kind, Buffer.from(text, 'utf8'));
}

/** A folder's usable files in name order (hidden ones left out), and the files it passed over. */
async function listFolder(
  source: string,
  path: string,
  options: ReadInputsOptions,
): Promise<{ names: string[]; skipped: string[] } | (InputProblem & { skipped: string[] })> {
  const usable = (name: string) => usableExtension(name) || isImageInput(name, options);
  const visible = (await readdir(path, { withFileTypes: true }))
    .filter((entry) => !entry.name.startsWith('.'))
    .sort((a, b) => a.name.localeCompare(b.name));
  const skipped = visible
    .filter((entry) => entry.isFile() && !usable(entry.name))
    .map((entry) => join(source, entry.name));
  const names = visible.map((entry) => entry.name).filter(usable);
  if (names.length > 0) return { names, skipped };
  return {
    source,
    reason: `the folder has no .md, .txt, .json, .docx${options.images ? ', .pdf, .png or .jpg' : ' or .pdf'} files`,
    skipped,
  };
}

/** One file: an image, a document to extract (.docx, .pdf) or a text one, or why it cannot be. */
async function readFileInput(
  source: string,
  path: string,
  options: ReadInputsOptions,
): Promise<InputDocument | InputProblem> {
  const extension = extname(path).toLowerCase();
  if (isImageInput(path, options)) {
    try {
      const bytes = await readRegularFile(path, { maxBytes: maxImageFileBytes, shownAs: source });
      return { source, fileName: basename(path), kind: 'image', content: '', bytes };
    } catch (error) {
      return { source, reason: describeFileError(error) };
    }
  }
  if (extractedExtensions.has(extension)) return readExtracted(source, path);
  const kind = kindByExtension[extension];
  if (!kind)
    return {
      source,
      reason: `unsupported file type ${extname(path) || '(none)'}: use .md, .txt, .json, .docx or .pdf`,
    };
  // Regular files only (a FIFO would wait forever, a device never end), no more than the limit.
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(path, { maxBytes: maxInputBytes, shownAs: source });
  } catch (error) {
    return { source, reason: describeFileError(error) };
  }
  return parseDocument(source, basename(path), kind, bytes);
}

/** A .docx or .pdf: its text, extracted under the ingest's budget, read as Markdown. */
async function readExtracted(source: string, path: string): Promise<InputDocument | InputProblem> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(path, { maxBytes: maxDocumentBytes, shownAs: source });
  } catch (error) {
    return { source, reason: describeFileError(error) };
  }
  try {
    const extracted = await extractDocument(basename(path), bytes);
    if (extracted.kind !== 'text') return { source, reason: 'no text in the document' };
    return parseDocument(source, basename(path), 'markdown', Buffer.from(extracted.text, 'utf8'));
  } catch (error) {
    return { source, reason: error instanceof DocumentProblem ? error.message : errorMessage(error) };
  }
}

function parseDocument(
  source: string,
  fileName: string,
  kind: InputKind,
  bytes: Uint8Array,
): InputDocument | InputProblem {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { source, reason: 'not UTF-8 text (is it a binary file?)' };
  }
  text = text.replace(/^\uFEFF/, '');
  if (text.trim() === '')
    return { source, reason: source === '-' ? 'standard input is empty' : 'the file is empty' };
  if (looksBinary(text))
    return { source, reason: 'not text: it holds NUL or control bytes (is it a binary file?)' };
  if (kind !== 'json') return { source, fileName, kind, content: text };
  try {
    return { source, fileName, kind, content: text, json: JSON.parse(text) };
  } catch (error) {
    return { source, reason: `invalid JSON: ${errorMessage(error)}` };
  }
}

/**
 * Valid UTF-8 can still be binary (NUL bytes, control codes): running it would bill a job for noise.
 * Any NUL, or more than one control character in a hundred (tabs, line and page breaks aside).
 */
function looksBinary(text: string): boolean {
  let controls = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 0) return true;
    // 9–13: tab, line feed, vertical tab, form feed, carriage return.
    if ((code < 32 && (code < 9 || code > 13)) || code === 127) controls += 1;
  }
  return controls > text.length / 100;
}
