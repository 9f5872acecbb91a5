/**
 * Documents sent straight to storage by the presigned PUTs the AWS job API answers
 * (`POST /batch-uploads` with `documentFiles`): each document's SHA-256 computed here (the PUT is
 * bound to it, and to the length), then each sent with its progress, a few at a time. A PUT that
 * fails is named with why (S3's error code in words: form-problems.ts), never with its URL (the URL
 * carries its signature).
 */
import { storageRefusalText } from './form-problems';

/** One presigned PUT of the answer. */
export interface DocumentPut {
  name: string;
  method: 'PUT';
  url: string;
  headers: Record<string, string>;
  expiresAt: string;
}

/** Where one document's PUT is. */
export type PutState =
  | { state: 'waiting' }
  | { state: 'sending'; sent: number; total: number }
  | { state: 'sent' }
  | { state: 'failed'; reason: string };

/** PUTs at once: enough to keep a connection busy, few enough that each shows progress. */
const putsAtOnce = 3;

/** A file's SHA-256 in lowercase hex, as `documentFiles` carries it. */
export async function sha256Hex(file: Blob): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await file.arrayBuffer()));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Sends one document by its PUT (XMLHttpRequest: fetch does not report an upload's progress). */
export function putDocument(
  put: DocumentPut,
  file: Blob,
  onProgress: (sent: number, total: number) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open(put.method, put.url);
    for (const [name, value] of Object.entries(put.headers)) request.setRequestHeader(name, value);
    request.upload.onprogress = (event) =>
      onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    request.onload = () => {
      if (request.status >= 200 && request.status < 300) return resolve();
      // S3's XML error in words (never the XML, never the URL); a bare 403 past the link's expiry is that.
      const body = request.responseText ?? '';
      reject(
        new Error(
          request.status === 403 && !body.includes('<Code>') && Date.parse(put.expiresAt) < Date.now()
            ? 'its upload link expired: send it again; the page asks for fresh links'
            : storageRefusalText(request.status, body, {
                name: put.name,
                bytes: file.size,
                kind: 'document',
              }),
        ),
      );
    };
    request.onerror = () => reject(new Error('the connection to storage failed'));
    request.onabort = () => reject(new Error('the upload was stopped'));
    request.send(file);
  });
}

/**
 * Sends every document whose name is in `names` by its PUT, `putsAtOnce` at a time, telling
 * `onState` as each moves; the names of those that failed.
 */
export async function sendDocuments(
  puts: DocumentPut[],
  files: ReadonlyMap<string, Blob>,
  names: ReadonlySet<string>,
  onState: (name: string, state: PutState) => void,
): Promise<string[]> {
  const queue = puts.filter((put) => names.has(put.name));
  const failed: string[] = [];
  const worker = async () => {
    for (let put = queue.shift(); put; put = queue.shift()) {
      const { name } = put;
      const file = files.get(name);
      try {
        if (!file) throw new Error('it is no longer chosen');
        onState(name, { state: 'sending', sent: 0, total: file.size });
        await putDocument(put, file, (sent, total) => onState(name, { state: 'sending', sent, total }));
        onState(name, { state: 'sent' });
      } catch (error) {
        failed.push(name);
        onState(name, { state: 'failed', reason: (error as Error).message });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(putsAtOnce, queue.length) }, worker));
  return failed;
}
