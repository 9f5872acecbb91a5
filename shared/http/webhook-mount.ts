/**
 * `POST /webhooks/{source}` on `opflow serve`: a mount of the node server that reads the body as
 * raw bytes (the signature covers them exactly: no decoding, no BOM stripped) up to the source's
 * limit, and answers with the webhook handler. No bearer token: the signature authenticates.
 */
import type { IncomingMessage } from 'node:http';
import type { OpflowConfig } from '../config/opflow-config';
import { refusal } from './api-error';
import type { JobApiResponse } from './job-api';
import type { ServerMount } from './node-server';
import { type WebhookRequest, webhookPathPattern } from './webhooks';

const defaultLimit = 256 * 1024;

/** Reads at most `limit` bytes; undefined when the body is longer. */
function readRaw(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        req.off('data', onData);
        req.off('end', onEnd);
        resolve(undefined);
      } else chunks.push(chunk);
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
  });
}

export function webhookMount(
  handle: (request: WebhookRequest) => Promise<JobApiResponse>,
  config: OpflowConfig,
): ServerMount {
  return {
    public: true,
    matches: (path) => webhookPathPattern.test(path),
    async handle(req, res, { path, method }) {
      let source = '';
      try {
        source = decodeURIComponent(webhookPathPattern.exec(path)?.[1] ?? '');
      } catch {
        // Not valid URL encoding: no source has such a name (answered 404).
      }
      let response: JobApiResponse;
      if (method !== 'POST') {
        response = refusal(405, 'method-not-allowed', `${method} is not supported; use POST`, {
          allow: 'POST',
        });
      } else {
        const limit = config.webhooks[source]?.maxBodyBytes ?? defaultLimit;
        const body = await readRaw(req, limit);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        response =
          body === undefined
            ? refusal(413, 'body-too-large', `the body is over ${limit} bytes`, { connection: 'close' })
            : await handle({ source, headers, body });
      }
      res.writeHead(response.status, response.headers);
      res.end(response.body);
      if (!req.complete) req.resume();
    },
  };
}
