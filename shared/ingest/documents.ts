/**
 * Text out of a disclosure document: .txt and .md as UTF-8, .json as an object of input fields,
 * .docx through mammoth, .pdf through unpdf. Anything else, an empty document or one too large is
 * refused with the reason, so the ingest reports it and goes on.
 */
import { extname } from 'node:path';

export const documentExtensions = ['.txt', '.md', '.json', '.docx', '.pdf'] as const;
/** Larger documents are refused (a disclosure is rarely over a few MB). */
export const maxDocumentBytes = 50 * 1024 * 1024;

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
  let text: string;
  try {
    if (extension === '.docx') {
      const mammoth = await import('mammoth');
      text = (await mammoth.extractRawText({ buffer: Buffer.from(body) })).value;
    } else if (extension === '.pdf') {
      const { extractText, getDocumentProxy } = await import('unpdf');
      const pdf = await getDocumentProxy(new Uint8Array(body));
      text = (await extractText(pdf, { mergePages: true })).text;
    } else {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    }
  } catch (error) {
    throw new DocumentProblem(
      `cannot read the ${extension.slice(1)} document: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  text = text.replace(/^\uFEFF/, '');
  if (extension === '.json') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new DocumentProblem(`not valid JSON: ${(error as Error).message}`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new DocumentProblem('a JSON document must hold one object of input fields');
    return { kind: 'json', value: value as Record<string, unknown> };
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: binary content shows as NUL bytes.
  if (/\u0000/.test(text)) throw new DocumentProblem('the document is binary, not text');
  if (text.trim() === '') throw new DocumentProblem('the document has no text');
  return { kind: 'text', text };
}
