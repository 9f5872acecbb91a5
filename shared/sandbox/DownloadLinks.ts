/**
 * Download links the sandbox hands out (`download_url`, `report_url`) and serves itself at
 * `/files/<token>/<file name>`. A link is an opaque random token that expires `ttlMs` after it was
 * handed out, by the sandbox clock; it never carries the API key. Every poll that reports a finished
 * document mints a fresh link, like a presigned URL; the document itself is rendered once.
 */
import { randomBytes } from 'node:crypto';

export interface PublishedDocument {
  fileName: string;
  contentType: string;
  render(): Promise<Uint8Array> | Uint8Array;
}

interface Link {
  documentKey: string;
  expiresAt: number;
}

interface DocumentEntry {
  document: PublishedDocument;
  bytes?: Promise<Uint8Array>;
}

export type OpenedLink =
  | { kind: 'ok'; body: Uint8Array; fileName: string; contentType: string }
  | { kind: 'expired' }
  | { kind: 'missing' };

export class DownloadLinks {
  private readonly links = new Map<string, Link>();
  private readonly documents = new Map<string, DocumentEntry>();

  constructor(private readonly options: { ttlMs: number; now: () => number; baseUrl: () => string }) {}

  /** A fresh link to the document stored under `documentKey` (stored on first publication). */
  publish(documentKey: string, document: PublishedDocument): string {
    if (!this.documents.has(documentKey)) this.documents.set(documentKey, { document });
    const token = randomBytes(18).toString('base64url');
    this.links.set(token, { documentKey, expiresAt: this.options.now() + this.options.ttlMs });
    return `${this.options.baseUrl()}/files/${token}/${encodeURIComponent(document.fileName)}`;
  }

  /** What `/files/<token>/<fileName>` serves. */
  async open(token: string, fileName: string): Promise<OpenedLink> {
    const link = this.links.get(token);
    const entry = link && this.documents.get(link.documentKey);
    if (!link || !entry || entry.document.fileName !== fileName) return { kind: 'missing' };
    if (this.options.now() >= link.expiresAt) return { kind: 'expired' };
    entry.bytes ??= Promise.resolve(entry.document.render());
    const body = await entry.bytes;
    return { kind: 'ok', body, fileName: entry.document.fileName, contentType: entry.document.contentType };
  }
}
