/**
 * Writing answers: the platform's JSON envelopes, and the broken answers that faults call for
 * (reset connections, truncated and malformed bodies, gateway 5xx pages).
 */
import type { ServerResponse } from 'node:http';

export interface Envelope {
  data: unknown;
  status: boolean;
  error_code: number;
  error_msg?: string;
}

export const okEnvelope = (data: unknown): Envelope => ({ data, status: true, error_code: 0 });

export const errorEnvelope = (code: number, message: string): Envelope => ({
  data: null,
  status: false,
  error_code: code,
  error_msg: message,
});

export type BodyDamage = 'truncated' | 'malformed';

/** Write a JSON answer, possibly damaged on purpose. */
export function writeJson(
  res: ServerResponse,
  httpStatus: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
  damage?: BodyDamage,
): void {
  let text = JSON.stringify(body);
  if (damage === 'malformed')
    text = `${text.slice(0, Math.max(1, Math.floor(text.length / 2)))}<!-- sandbox: malformed -->`;
  const bytes = Buffer.from(text, 'utf8');
  res.writeHead(httpStatus, {
    ...headers,
    'content-type': 'application/json;charset=UTF-8',
    'content-length': String(bytes.length),
  });
  if (damage === 'truncated') {
    writeTruncated(res, bytes);
    return;
  }
  res.end(bytes);
}

/** Send about half of `bytes` after a header announcing all of them, then close the connection. */
export function writeTruncated(res: ServerResponse, bytes: Uint8Array): void {
  res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.socket?.destroy());
}

/** Drop the connection without an answer (RST where the platform supports it). */
export function resetConnection(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

/** What a gateway in front of the platform answers when the service behind it fails. */
export function writeGatewayError(
  res: ServerResponse,
  httpStatus: number,
  headers: Readonly<Record<string, string>> = {},
): void {
  const body = `<html><head><title>${httpStatus}</title></head><body><h1>${httpStatus} ${statusText(httpStatus)}</h1></body></html>`;
  res.writeHead(httpStatus, {
    ...headers,
    'content-type': 'text/html',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

function statusText(status: number): string {
  return (
    {
      500: 'Internal Server Error',
      502: 'Bad Gateway',
      503: 'Service Temporarily Unavailable',
      504: 'Gateway Time-out',
    }[status] ?? 'Server Error'
  );
}

/** An S3-like XML error, for download links. */
export function writeStorageError(
  res: ServerResponse,
  httpStatus: number,
  code: string,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  res.writeHead(httpStatus, {
    ...headers,
    'content-type': 'application/xml',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}
