/**
 * Documents: downloading a link the platform handed out (exports, full texts) with the file name
 * it declares, size-limited, without the platform's key.
 */
import * as z from 'zod';
import { type Attempt, failAttempt, limitSignal, startAttempt, succeedAttempt } from './client-attempt';
import { type ClientContext, parseCallOptions } from './client-settings';
import { readLimitedBytes } from './client-transport';
import { correlationIdOf, headerValue, parseRetryAfter } from './envelope';
import { kindFor, OpenPlatformError } from './errors';
import { redactUrl } from './redact';
import type { CallOptions, FetchedDocument } from './types';

const MAX_REDIRECTS = 5;
const isRedirect = (status: number) => [301, 302, 303, 307, 308].includes(status);

/** A document link is a plain GET; the platform's keys must never travel with it. */
const documentOperation = 'fetchDocument';

/** Download a document link (a plain GET, redirects followed, the platform key never sent). */
export async function fetchDocument(
  ctx: ClientContext,
  url: string,
  callOptions?: CallOptions,
): Promise<FetchedDocument> {
  const opts = parseCallOptions(documentOperation, callOptions);
  // Only the link's own credentials (if any) travel; the platform key is never added.
  const attempt: Attempt = { ...startAttempt(ctx, undefined, documentOperation, opts), apiKey: opts.apiKey };
  const shown = redactUrl(url);
  let limit: ReturnType<typeof limitSignal> | undefined;
  try {
    const target = z.url({ protocol: /^https?$/ }).safeParse(url);
    if (!target.success) {
      throw new OpenPlatformError({
        kind: 'invalid-request',
        message: `fetchDocument needs an http(s) URL, got "${redactUrl(String(url)).slice(0, 200)}"`,
        operationId: documentOperation,
      });
    }
    let current = new URL(target.data);
    limit = limitSignal(attempt, opts.timeoutMs ?? ctx.overallTimeoutMs);
    ctx.log('debug', 'fetching document', { url: shown }, ctx.secretsOf(attempt));
    let response = await getDocument(ctx, current, limit.signal);
    // Links may redirect to storage; followed by hand so the file name comes from the last URL.
    for (let hops = 0; isRedirect(response.statusCode) && hops < MAX_REDIRECTS; hops++) {
      const location = headerValue(response.headers, 'location');
      if (location === undefined) break;
      await response.body.dump().catch(() => undefined);
      current = new URL(location, current);
      if (current.protocol !== 'http:' && current.protocol !== 'https:') break;
      ctx.log(
        'debug',
        'following document redirect',
        { url: redactUrl(current.href) },
        ctx.secretsOf(attempt),
      );
      response = await getDocument(ctx, current, limit.signal);
    }
    attempt.httpStatus = response.statusCode;
    attempt.headers = response.headers;
    if (response.statusCode < 200 || response.statusCode > 299) {
      await response.body.dump().catch(() => undefined);
      const gone = [403, 404, 410].includes(response.statusCode);
      const kind = gone ? 'not-found' : kindFor(response.statusCode, undefined);
      throw new OpenPlatformError({
        kind,
        message: gone
          ? `the document link has expired or does not exist (HTTP ${response.statusCode}): ${shown}`
          : `fetching the document failed (HTTP ${response.statusCode}): ${shown}`,
        operationId: documentOperation,
        httpStatus: response.statusCode,
        correlationId: correlationIdOf(response.headers),
        retryAfterMs: parseRetryAfter(headerValue(response.headers, 'retry-after'), ctx.settings.now()),
      });
    }
    const bytes = await readLimitedBytes(response.body, ctx.settings.maxDocumentBytes);
    const contentType = headerValue(response.headers, 'content-type') ?? 'application/octet-stream';
    const fileName =
      fileNameFromDisposition(headerValue(response.headers, 'content-disposition')) ??
      fileNameFromPath(current);
    const usage = succeedAttempt(ctx, attempt, { url: shown, bytes: bytes.byteLength });
    return { body: bytes, contentType, fileName, usage };
  } catch (error) {
    throw failAttempt(ctx, attempt, error);
  } finally {
    limit?.release();
  }
}

const getDocument = (ctx: ClientContext, url: URL, signal: AbortSignal) =>
  ctx.transport.request({
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    method: 'GET',
    headers: { 'user-agent': ctx.settings.userAgent, accept: '*/*' },
    signal,
    headersTimeout: ctx.settings.headersTimeoutMs,
    bodyTimeout: ctx.settings.bodyTimeoutMs,
  });

/** `attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf` or `filename="report.docx"`. */
export function fileNameFromDisposition(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(header);
  if (extended?.[2]) {
    try {
      return sanitizeFileName(decodeURIComponent(extended[2].trim().replace(/^"|"$/g, '')));
    } catch {
      // fall through to the plain form
    }
  }
  const plain = /filename\s*=\s*("((?:[^"\\]|\\.)*)"|[^;]+)/i.exec(header);
  const value = plain?.[2] ?? plain?.[1];
  return value ? sanitizeFileName(value.replace(/\\(.)/g, '$1').trim()) : undefined;
}

function fileNameFromPath(url: URL): string {
  const last = url.pathname.split('/').filter(Boolean).pop();
  if (!last) return 'download';
  try {
    return sanitizeFileName(decodeURIComponent(last)) ?? 'download';
  } catch {
    return sanitizeFileName(last) ?? 'download';
  }
}

/** No directories, no control characters: the name is used to store the file. */
function sanitizeFileName(name: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we remove
  const cleaned = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? undefined : cleaned;
}
