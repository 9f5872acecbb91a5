/**
 * The job API as the page calls it: JSON with the bearer token the person typed in (kept for this
 * tab only), a refusal turned into an `ApiError` with the server's code and message, and a 401 of the
 * token still kept sent to the sign-in form.
 */
import { storageRefusalText } from './form-problems';
import type { Api, ReportFile, Settings } from './types';

export const tokenKey = 'opflow.token';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Each field at fault (`body.input.text`) and what is wrong with it, when the server says. */
    readonly issues: readonly { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

export function createApi(config: Settings, onUnauthorized: (error: ApiError) => void): Api {
  const base = config.apiBase.replace(/\/+$/, '');
  return async function request<T>(method: 'GET' | 'POST', path: string, payload?: unknown): Promise<T> {
    // Every POST says JSON, even one with nothing to send (the server refuses anything else).
    const body = payload === undefined && method !== 'GET' ? {} : payload;
    const headers: Record<string, string> = { accept: 'application/json' };
    const token = sessionStorage.getItem(tokenKey);
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        credentials: 'same-origin',
        cache: 'no-store',
      });
    } catch (error) {
      throw new ApiError(0, 'network', `the job API cannot be reached (${(error as Error).message})`);
    }
    const type = response.headers.get('content-type') ?? '';
    const answer: unknown = type.includes('json') ? await response.json() : await response.text();
    if (!response.ok) {
      const error =
        typeof answer === 'object' && answer !== null && 'error' in answer
          ? (answer.error as {
              code?: string;
              message?: string;
              issues?: { path: string; message: string }[];
            })
          : {};
      const failure = new ApiError(
        response.status,
        error.code ?? 'error',
        error.message ?? `the job API answered ${response.status}`,
        error.issues ?? [],
      );
      // A refusal of a request sent before the person signed in (or with a token since replaced)
      // says nothing about the token now kept: only a refusal of the current token asks again.
      if (response.status === 401 && sessionStorage.getItem(tokenKey) === token) onUnauthorized(failure);
      throw failure;
    }
    return answer as T;
  };
}

/** Saves a file the API serves (with the token), or opens a presigned link. */
export async function downloadFile(config: Settings, file: Pick<ReportFile, 'name' | 'href' | 'url'>) {
  if (!file.href) {
    open(file.url, '_blank', 'noopener');
    return;
  }
  const token = sessionStorage.getItem(tokenKey);
  const response = await fetch(`${config.apiBase.replace(/\/+$/, '')}${file.href}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (!response.ok) throw new Error(`the server answered ${response.status}`);
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await response.blob());
  link.download = file.name.split('/').pop() ?? file.name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

/** What `POST /batch-uploads` answers: the batch started (opflow serve), or where to put the manifest (AWS). */
type UploadAnswer =
  | { batch: { id: string } }
  | { batchId: string; upload: { method: 'PUT'; url: string; headers: Record<string, string> } };

/**
 * Starts the batch of a checked manifest; returns its id. On AWS the answer is a presigned S3 PUT
 * bound to the manifest's SHA-256: the page sends the manifest there itself (the bucket allows the
 * dashboard's origin), and the ingest function starts the batch moments later.
 */
export async function startBatchUpload(
  api: Api,
  body: { manifest?: string | undefined; fileName?: string | undefined; workflow: string },
): Promise<string> {
  const answer = await api<UploadAnswer>('POST', '/batch-uploads', body);
  if ('batch' in answer) return answer.batch.id;
  if (body.manifest === undefined)
    throw new ApiError(400, 'invalid-request', 'this job API took documents without starting their batch');
  let sent: Response;
  try {
    sent = await fetch(answer.upload.url, {
      method: answer.upload.method,
      headers: answer.upload.headers,
      body: body.manifest,
    });
  } catch (error) {
    throw new ApiError(0, 'network', `the upload to storage failed (${(error as Error).message})`);
  }
  if (!sent.ok) {
    // S3's XML error in words, at the manifest's field: what was refused, why, and what to do.
    const said = storageRefusalText(sent.status, await sent.text().catch(() => ''), {
      name: body.fileName ?? 'the manifest',
      bytes: new TextEncoder().encode(body.manifest).length,
      kind: 'manifest',
    });
    throw new ApiError(sent.status, 'storage-refused', said, [{ path: 'body.manifest', message: said }]);
  }
  return answer.batchId;
}
