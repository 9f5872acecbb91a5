/**
 * An HTTP proxy in front of fauxqs' S3 that sends S3's event notifications, which fauxqs does not:
 * when a request that creates an object (PutObject, CopyObject, CompleteMultipartUpload) succeeds,
 * every notification whose bucket, prefix and suffix match is handed the S3 event S3 would send
 * (`ObjectCreated:Put`, `:Copy`, `:CompleteMultipartUpload`), e.g. to a function's asynchronous
 * invocation. Requests and answers pass through unchanged (path-style URLs, as opflow's clients
 * and presigned URLs use against an endpoint), bodies streamed.
 */
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { s3CreatedEvent } from '../../shared/backends/aws/s3-inbox';

/** One notification of a bucket (what the template's NotificationConfiguration says). */
export interface S3Notification {
  bucket: string;
  prefix?: string | undefined;
  suffix?: string | undefined;
  deliver(event: unknown): void;
}

export interface S3NotificationProxy {
  /** The endpoint to give as AWS_ENDPOINT_URL_S3. */
  url: string;
  /** Objects created through the proxy, with the event name S3 gave them. */
  readonly created: { bucket: string; key: string; eventName: string }[];
  close(): Promise<void>;
}

/** The object a path-style request names, and which creation it is (undefined: it creates none). */
function creationOf(
  method: string,
  url: URL,
  headers: Record<string, unknown>,
): { bucket: string; key: string; eventName: string } | undefined {
  const [, bucket, ...rest] = url.pathname.split('/');
  const key = rest.map((part) => decodeURIComponent(part)).join('/');
  if (!bucket || !key) return undefined;
  if (method === 'PUT' && !url.searchParams.has('uploadId') && !url.searchParams.has('partNumber')) {
    if (
      [...url.searchParams.keys()].some((name) =>
        ['tagging', 'acl', 'retention', 'legal-hold'].includes(name),
      )
    )
      return undefined;
    return {
      bucket,
      key,
      eventName: headers['x-amz-copy-source'] ? 'ObjectCreated:Copy' : 'ObjectCreated:Put',
    };
  }
  if (method === 'POST' && url.searchParams.has('uploadId'))
    return { bucket, key, eventName: 'ObjectCreated:CompleteMultipartUpload' };
  return undefined;
}

/** The hop-by-hop headers (RFC 9110 §7.6.1 and §7.8, RFC 9112 §6.1), which a proxy does not forward. */
const hopByHopHeaders = [
  'connection',
  'proxy-connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

/**
 * The answer's headers without the hop-by-hop ones (and any header `Connection` names). They describe
 * fauxqs' connection to the proxy, not the proxy's to its client: fauxqs (fastify) says `Keep-Alive:
 * timeout=72` while this server closes an idle socket after Node's 5 s, and a client that believed
 * 72 s sent requests on sockets the proxy was closing (`SocketError: other side closed`). Node writes
 * the proxy's own (`Keep-Alive: timeout=5`, and the body's framing: chunked when no length). The
 * SQS trace proxy (./sqs-trace-proxy.ts) passes its answers on through it too.
 */
export function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const hopByHop = new Set([...hopByHopHeaders, ...named]);
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !hopByHop.has(name.toLowerCase())));
}

export async function startS3NotificationProxy(options: {
  /** fauxqs' address. */
  target: string;
  notifications: S3Notification[];
}): Promise<S3NotificationProxy> {
  const target = new URL(options.target);
  const created: S3NotificationProxy['created'] = [];
  let sequence = 0;
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://proxy');
    const creation = creationOf(request.method ?? 'GET', url, request.headers);
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: target.host },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 500, endToEnd(answer.headers));
        answer.pipe(response);
        answer.on('end', () => {
          if (!creation || answer.statusCode !== 200) return;
          created.push(creation);
          const etag = String(answer.headers.etag ?? '').replace(/"/g, '') || undefined;
          const size = Number(request.headers['content-length']);
          for (const notification of options.notifications) {
            if (notification.bucket !== creation.bucket) continue;
            if (notification.prefix && !creation.key.startsWith(notification.prefix)) continue;
            if (notification.suffix && !creation.key.endsWith(notification.suffix)) continue;
            sequence += 1;
            notification.deliver(
              s3CreatedEvent({ bucket: creation.bucket, key: creation.key }, etag, {
                eventName: creation.eventName,
                ...(Number.isFinite(size) && creation.eventName === 'ObjectCreated:Put' ? { size } : {}),
                sequencer: sequence.toString(16).toUpperCase().padStart(16, '0'),
              }),
            );
          }
        });
      },
    );
    outgoing.on('error', (error) => {
      response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
    request.pipe(outgoing);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    created,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
