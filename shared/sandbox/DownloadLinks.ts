/**
 * Download links the sandbox hands out (`download_url`, `report_url`) and serves itself at
 * `/files/<token>/<file name>`. A link is an opaque random token that expires `ttlMs` after it was
 * handed out, by the sandbox clock; it never carries the API key. Every poll that reports a finished
 * document mints a fresh link, like a presigned URL; the document itself is rendered once.
 * So that long runs do not grow without bound, links expired for longer than another `ttlMs` are
 * forgotten (they then answer 404 instead of 403), and with them the rendered documents no live link
 * points at (rendered again if published again).
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

/** Links kept before the first sweep of long-expired ones; later sweeps wait for twice as many. */
const FIRST_SWEEP_AT = 1024;

export class DownloadLinks {
  private readonly links = new Map<string, Link>();
  private readonly documents = new Map<string, DocumentEntry>();
  private sweepAt = FIRST_SWEEP_AT;

  constructor(private readonly options: { ttlMs: number; now: () => number; baseUrl: () => string }) {}

  /** @internal How many links and documents are kept (tests of the sweep). */
  get kept(): { links: number; documents: number } {
    return { links: this.links.size, documents: this.documents.size };
  }

  /** A fresh link to the document stored under `documentKey` (stored on first publication). */
  publish(documentKey: string, document: PublishedDocument): string {
    if (this.links.size >= this.sweepAt) this.sweep();
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

  /** Forget links expired for more than another TTL, and documents no remaining link points at. */
  private sweep(): void {
    const forgetBefore = this.options.now() - this.options.ttlMs;
    const linked = new Set<string>();
    for (const [token, link] of this.links) {
      if (link.expiresAt <= forgetBefore) this.links.delete(token);
      else linked.add(link.documentKey);
    }
    for (const documentKey of this.documents.keys()) {
      if (!linked.has(documentKey)) this.documents.delete(documentKey);
    }
    this.sweepAt = Math.max(FIRST_SWEEP_AT, 2 * this.links.size);
  }
}
