/**
 * Download links the sandbox hands out (`download_url`, `report_url`) and serves itself at
 * `/files/<token>/<file name>`. A link is an opaque random token that expires `ttlMs` after it was
 * handed out, by the sandbox clock; it never carries the API key. Every poll that reports a finished
 * document mints a fresh link, like a presigned URL; the document itself is rendered once.
 * So that long runs do not grow without bound, links expired for longer than another `ttlMs` are
 * forgotten (they then answer 404 instead of 403), and with them the documents no live link points
 * at (described and rendered again if published again).
 *
 * A document is kept as what it is made from (format, file name, outline), never as bytes, so the
 * links and their documents fit in a sandbox state file and still work after a restart.
 */
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { formatIssues } from '../errors/zod-issues';
import {
  contentTypeOf,
  type DocumentFormat,
  type DocumentOutline,
  documentFormats,
  documentOutlineSchema,
  renderDocument,
} from './documents';
import { StoredEntries } from './stored-entries';

export interface PublishedDocument {
  fileName: string;
  format: DocumentFormat;
  outline: DocumentOutline;
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

const linkSchema = z.strictObject({ documentKey: z.string().min(1), expiresAt: z.number() });
const documentSchema = z.strictObject({
  fileName: z.string().min(1),
  format: z.enum(documentFormats),
  outline: documentOutlineSchema,
}) satisfies z.ZodType<PublishedDocument>;

/** The links and documents as kept in a sandbox state file. */
export const storedLinksSchema = z.strictObject({
  links: z.record(z.string().min(1), linkSchema),
  documents: z.record(z.string().min(1), documentSchema),
});

/** Links kept before the first sweep of long-expired ones; later sweeps wait for twice as many. */
const FIRST_SWEEP_AT = 1024;

export interface DownloadLinksOptions {
  ttlMs: number;
  now: () => number;
  baseUrl: () => string;
  /** Makes a document's bytes; by default `renderDocument`. */
  render?: (document: PublishedDocument) => Promise<Uint8Array> | Uint8Array;
}

export class DownloadLinks {
  private readonly links = new Map<string, Link>();
  private readonly documents = new Map<string, DocumentEntry>();
  private readonly storedLinks = new StoredEntries();
  private readonly storedDocuments = new StoredEntries();
  private sweepAt = FIRST_SWEEP_AT;
  private changedSinceSettled = false;

  constructor(private readonly options: DownloadLinksOptions) {}

  /** @internal How many links and documents are kept (tests of the sweep). */
  get kept(): { links: number; documents: number } {
    return { links: this.links.size, documents: this.documents.size };
  }

  /**
   * A fresh link to the document stored under `documentKey`. `describe` is asked for the document
   * only when that key holds none yet.
   */
  publish(documentKey: string, describe: () => PublishedDocument): string {
    if (this.links.size >= this.sweepAt) this.sweep();
    let entry = this.documents.get(documentKey);
    if (!entry) {
      entry = { document: describe() };
      this.documents.set(documentKey, entry);
      this.storedDocuments.set(documentKey, entry.document);
    }
    const token = randomBytes(18).toString('base64url');
    const link = { documentKey, expiresAt: this.options.now() + this.options.ttlMs };
    this.links.set(token, link);
    this.storedLinks.set(token, link);
    this.changedSinceSettled = true;
    return `${this.options.baseUrl()}/files/${token}/${encodeURIComponent(entry.document.fileName)}`;
  }

  /** What `/files/<token>/<fileName>` serves. */
  async open(token: string, fileName: string): Promise<OpenedLink> {
    const link = this.links.get(token);
    const entry = link && this.documents.get(link.documentKey);
    if (!link || !entry || entry.document.fileName !== fileName) return { kind: 'missing' };
    if (this.options.now() >= link.expiresAt) return { kind: 'expired' };
    const render = this.options.render ?? ((document) => renderDocument(document.format, document.outline));
    entry.bytes ??= Promise.resolve(render(entry.document));
    const body = await entry.bytes;
    return {
      kind: 'ok',
      body,
      fileName: entry.document.fileName,
      contentType: contentTypeOf(entry.document.format),
    };
  }

  /** True when links or documents changed since the last call. */
  settle(): boolean {
    const changed = this.changedSinceSettled;
    this.changedSinceSettled = false;
    return changed;
  }

  /** The links and documents as one JSON object text (see `storedLinksSchema`). */
  toJson(): string {
    return `{"links":${this.storedLinks.toJson()},"documents":${this.storedDocuments.toJson()}}`;
  }

  /**
   * Replace the links and documents with those read from a state file. Throws, naming the field,
   * when they are not valid or a link points at a document that is not there; nothing is replaced then.
   */
  restore(value: unknown): void {
    const parsed = storedLinksSchema.safeParse(value);
    if (!parsed.success) throw new Error(formatIssues(parsed.error, { root: 'links' }));
    for (const [token, link] of Object.entries(parsed.data.links)) {
      if (!Object.hasOwn(parsed.data.documents, link.documentKey)) {
        throw new Error(
          `links.links.${token}.documentKey: no document "${link.documentKey}" in links.documents`,
        );
      }
    }
    this.links.clear();
    this.documents.clear();
    this.storedLinks.clear();
    this.storedDocuments.clear();
    for (const [documentKey, document] of Object.entries(parsed.data.documents)) {
      this.documents.set(documentKey, { document });
      this.storedDocuments.set(documentKey, document);
    }
    for (const [token, link] of Object.entries(parsed.data.links)) {
      this.links.set(token, link);
      this.storedLinks.set(token, link);
    }
    this.sweepAt = Math.max(FIRST_SWEEP_AT, 2 * this.links.size);
    this.changedSinceSettled = false;
  }

  /** Forget links expired for more than another TTL, and documents no remaining link points at. */
  private sweep(): void {
    const forgetBefore = this.options.now() - this.options.ttlMs;
    const linked = new Set<string>();
    for (const [token, link] of this.links) {
      if (link.expiresAt <= forgetBefore) {
        this.links.delete(token);
        this.storedLinks.delete(token);
      } else linked.add(link.documentKey);
    }
    for (const documentKey of this.documents.keys()) {
      if (!linked.has(documentKey)) {
        this.documents.delete(documentKey);
        this.storedDocuments.delete(documentKey);
      }
    }
    this.sweepAt = Math.max(FIRST_SWEEP_AT, 2 * this.links.size);
    this.changedSinceSettled = true;
  }
}
