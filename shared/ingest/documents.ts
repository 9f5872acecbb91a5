/**
 * Text out of a disclosure document: .txt and .md as UTF-8, .json as an object of input fields,
 * .docx through mammoth, .pdf through unpdf. Anything else, an empty document or one too large is
 * refused with the reason, so the ingest reports it and goes on.
 *
 * .docx and .pdf are parsed in a child process under a budget (document-extractor.ts): a crafted
 * document (a zip bomb, a PDF that loops) costs at most that budget and is refused, instead of taking
 * the machine's memory or the Lambda's time. A .docx is also refused before it is unpacked when its
 * zip entries declare more than `maxDocxUnpackedBytes`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '../errors/error-message';
import { invalidUtf8Offset } from './invalid-utf8';
import { summarizeZip } from './zip-entries';

export const documentExtensions = ['.txt', '.md', '.json', '.docx', '.pdf'] as const;
/** Larger documents are refused (a disclosure is rarely over a few MB). */
export const maxDocumentBytes = 50 * 1024 * 1024;
/** The most a .docx's zip entries may unpack to, by their declared sizes. */
export const maxDocxUnpackedBytes = 100 * 1024 * 1024;

/**
 * The budget of one .docx or .pdf extraction: the child's V8 heap (`--max-old-space-size`), its
 * resident memory in all (heap, buffers and native memory; sampled every 50 ms from /proc, and the
 * child killed past it), and its time (killed past it; `OPFLOW_EXTRACTION_TIMEOUT_MS` sets another,
 * read at each extraction). With the parent's ~250 MB this fits the ingest function's 1,024 MB.
 */
export const extractionBudget = { heapMb: 256, residentMb: 512, timeMs: 30_000 } as const;
/** The most text an extraction may hand back (a document's text is far smaller than its file). */
const maxExtractedBytes = 64 * 1024 * 1024;

export type ExtractedDocument =
  | { kind: 'text'; text: string }
  | { kind: 'json'; value: Record<string, unknown> };

/** Why a document cannot be used. */
export class DocumentProblem extends Error {
  override readonly name = 'DocumentProblem';
}

export function isSupportedDocument(path: string): boolean {
  return (documentExtensions as readonly string[]).includes(extname(path).toLowerCase());
}

/** The text (or JSON fields) of the document `name` whose bytes are `body`. */
export async function extractDocument(name: string, body: Uint8Array): Promise<ExtractedDocument> {
  const extension = extname(name).toLowerCase();
  if (!isSupportedDocument(name))
    throw new DocumentProblem(
      `unsupported document type "${extension || '(none)'}" (supported: ${documentExtensions.join(', ')})`,
    );
  if (body.byteLength === 0) throw new DocumentProblem('the document is empty');
  if (body.byteLength > maxDocumentBytes)
    throw new DocumentProblem(`the document is larger than ${maxDocumentBytes / 1024 / 1024} MB`);
  if (extension === '.docx') {
    const zip = summarizeZip(body);
    if ('problem' in zip) throw new DocumentProblem(`cannot read the docx document: ${zip.problem}`);
    if (zip.uncompressedBytes > maxDocxUnpackedBytes)
      throw new DocumentProblem(
        `the docx document unpacks to ${Math.round(zip.uncompressedBytes / 1024 / 1024)} MB (at most ${maxDocxUnpackedBytes / 1024 / 1024} MB): is it a zip bomb?`,
      );
  }
  const text =
    extension === '.docx' || extension === '.pdf'
      ? await extractInChild(extension, body)
      : decodeText(extension, body);
  return documentFromText(extension, text);
}

/** The raw text of a .docx or .pdf, in this process: what the child runs. */
export async function extractRawText(extension: string, body: Uint8Array): Promise<string> {
  try {
    if (extension === '.docx') {
      // A disclosure form's label/value tables come first as `Label: value` lines (docx-form.ts).
      const { docxText } = await import('./docx-form');
      return await docxText(body);
    }
    const { extractText, getDocumentProxy } = await import('unpdf');
    const pdf = await getDocumentProxy(new Uint8Array(body));
    return (await extractText(pdf, { mergePages: true })).text;
  } catch (error) {
    throw new DocumentProblem(
      `cannot read the ${extension.slice(1)} document: ${errorMessage(error).split('\n')[0]}`,
    );
  }
}

function decodeText(extension: string, body: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch (error) {
    throw new DocumentProblem(
      `cannot read the ${extension.slice(1)} document: ${errorMessage(error).split('\n')[0]}${invalidUtf8At(body)}`,
    );
  }
}

/** ` (invalid UTF-8 at byte 1234)`: where the first bad sequence starts. */
function invalidUtf8At(body: Uint8Array): string {
  const at = invalidUtf8Offset(body);
  return at === undefined ? '' : ` (invalid UTF-8 at byte ${at})`;
}

function documentFromText(extension: string, raw: string): ExtractedDocument {
  const text = raw.replace(/^\uFEFF/, '');
  if (extension === '.json') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new DocumentProblem(`not valid JSON: ${errorMessage(error)}`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new DocumentProblem('a JSON document must hold one object of input fields');
    if (JSON.stringify(value).includes('\\u0000'))
      throw new DocumentProblem('a JSON document may not hold NUL characters (\\u0000)');
    return { kind: 'json', value: value as Record<string, unknown> };
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: binary content shows as NUL bytes.
  if (/\u0000/.test(text)) throw new DocumentProblem('the document is binary, not text');
  if (text.trim() === '') throw new DocumentProblem('the document has no text');
  return { kind: 'text', text };
}

/**
 * The child's command line: the built extractor beside this code (`document-extractor.mjs` or `.js`
 * beside the bundle's entry, this code being in the entry or in `chunks/`), or from the sources, the
 * TypeScript file through tsx.
 */
function extractorCommand(): string[] {
  const here = new URL(import.meta.url);
  const extension = extname(here.pathname);
  if (extension === '.ts')
    return ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('./document-extractor.ts', here))];
  const inChunk = /\/chunks\/[^/]+$/.test(here.pathname);
  return [fileURLToPath(new URL(`${inChunk ? '../' : './'}document-extractor${extension}`, here))];
}

/** The resident memory of a process in MB (Linux), or undefined where /proc is not there. */
function residentMb(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs the extraction in a child process under `extractionBudget` (its time from
 * `extractionTimeoutMs`, extraction-timeout.ts); its text, or a DocumentProblem.
 */
async function extractInChild(extension: string, body: Uint8Array): Promise<string> {
  const { extractionTimeoutMs } = await import('./extraction-timeout');
  const budget = { ...extractionBudget, timeMs: extractionTimeoutMs(process.env, extractionBudget.timeMs) };
  const child = spawn(
    process.execPath,
    [`--max-old-space-size=${budget.heapMb}`, ...extractorCommand(), extension],
    { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
  );
  let over: string | undefined;
  const stop = (why: string) => {
    over ??= why;
    child.kill('SIGKILL');
  };
  const timer = setTimeout(
    () => stop(`it took more than ${budget.timeMs / 1000} s to read: refused`),
    budget.timeMs,
  );
  const watch = setInterval(() => {
    const mb = child.pid === undefined ? undefined : residentMb(child.pid);
    if (mb !== undefined && mb > budget.residentMb)
      stop(`reading it needs more than ${budget.residentMb} MB of memory: refused`);
  }, 50);
  const out: Buffer[] = [];
  let outBytes = 0;
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    outBytes += chunk.byteLength;
    if (outBytes > maxExtractedBytes) stop(`its text is over ${maxExtractedBytes / 1024 / 1024} MB: refused`);
    else out.push(chunk);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (err.length < 8192) err += chunk.toString('utf8');
  });
  child.stdin.on('error', () => {});
  child.stdin.end(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  }).finally(() => {
    clearTimeout(timer);
    clearInterval(watch);
  });
  const kind = extension.slice(1);
  if (over) throw new DocumentProblem(`the ${kind} document: ${over}`);
  if (/heap out of memory|Allocation failed/i.test(err) || signal === 'SIGABRT' || code === 134)
    throw new DocumentProblem(
      `the ${kind} document: reading it needs more than ${budget.heapMb} MB of memory: refused`,
    );
  let answer: { text?: string; problem?: string } | undefined;
  try {
    answer = JSON.parse(Buffer.concat(out).toString('utf8')) as { text?: string; problem?: string };
  } catch {
    answer = undefined;
  }
  if (answer?.problem !== undefined) throw new DocumentProblem(answer.problem);
  if (code !== 0 || typeof answer?.text !== 'string')
    throw new DocumentProblem(
      `cannot read the ${kind} document: the extractor stopped (${signal ?? `exit ${code}`})`,
    );
  return answer.text;
}
