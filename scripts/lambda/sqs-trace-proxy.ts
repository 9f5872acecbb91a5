/**
 * An HTTP proxy in front of fauxqs for the SQS calls of the simulated functions. It does two things
 * the real service does and fauxqs does not: it keeps each sent message's trace header (the
 * `X-Amzn-Trace-Id` the SDK adds inside a Lambda invocation, which SQS stores as the message's
 * AWSTraceHeader), and it refuses what SQS refuses: a message over the queue's maximum size (the
 * template's MaximumMessageSize, 256 KiB by default) and a delay over 900 seconds. Everything else
 * passes through unchanged, but for the hop-by-hop headers of fauxqs' answers (its `Keep-Alive:
 * timeout=72` is not this server's 5 s: ./s3-notification-proxy.ts's `endToEnd`).
 */
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endToEnd } from './s3-notification-proxy';

/** SQS's longest message delay (DelaySeconds), in seconds. */
export const SQS_MAX_DELAY_SECONDS = 900;
/** SQS's default maximum message size, in bytes (CloudFormation's MaximumMessageSize default). */
export const SQS_DEFAULT_MAX_MESSAGE_BYTES = 262_144;

export interface SqsTraceProxy {
  /** The endpoint to give the functions as AWS_ENDPOINT_URL_SQS. */
  url: string;
  /** The trace header each message was sent with, by message id (absent: sent outside any invocation). */
  traceHeaders: Map<string, string>;
  /** What the proxy refused, as SQS would have (error code and message). */
  refused: { code: string; message: string }[];
  close(): Promise<void>;
}

interface SendEntry {
  MessageBody?: string;
  DelaySeconds?: number;
  MessageAttributes?: Record<string, { DataType?: string; StringValue?: string; BinaryValue?: string }>;
}

/** A message's size as SQS counts it: the body and each attribute's name, type and value. */
function messageBytes(entry: SendEntry): number {
  let bytes = Buffer.byteLength(entry.MessageBody ?? '');
  for (const [name, value] of Object.entries(entry.MessageAttributes ?? {})) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '');
    bytes +=
      Buffer.byteLength(value.StringValue ?? '') + Buffer.byteLength(value.BinaryValue ?? '', 'base64');
  }
  return bytes;
}

/** Why SQS would refuse this entry, or undefined. */
function refusalOf(entry: SendEntry, maxMessageBytes: number): { code: string; message: string } | undefined {
  const size = messageBytes(entry);
  if (size > maxMessageBytes) {
    return {
      code: 'InvalidParameterValue',
      message: `One or more parameters are invalid. Reason: Message must be shorter than ${maxMessageBytes} bytes (this one is ${size}).`,
    };
  }
  if (
    entry.DelaySeconds !== undefined &&
    (entry.DelaySeconds < 0 || entry.DelaySeconds > SQS_MAX_DELAY_SECONDS)
  ) {
    return {
      code: 'InvalidParameterValue',
      message: `Value ${entry.DelaySeconds} for parameter DelaySeconds is invalid. Reason: must be between 0 and ${SQS_MAX_DELAY_SECONDS}, if provided.`,
    };
  }
  return undefined;
}

export async function startSqsTraceProxy(options: {
  /** fauxqs' address. */
  target: string;
  /** The queue's maximum message size in bytes (default 256 KiB). */
  maxMessageBytes?: number;
}): Promise<SqsTraceProxy> {
  const target = new URL(options.target);
  const maxMessageBytes = options.maxMessageBytes ?? SQS_DEFAULT_MAX_MESSAGE_BYTES;
  const traceHeaders = new Map<string, string>();
  const refused: SqsTraceProxy['refused'] = [];

  const forward = (
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method,
          path,
          headers: { ...headers, host: target.host },
        },
        async (response) => {
          const chunks: Buffer[] = [];
          for await (const chunk of response) chunks.push(chunk as Buffer);
          resolve({
            status: response.statusCode ?? 500,
            headers: response.headers,
            body: Buffer.concat(chunks),
          });
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const server: Server = createServer(async (request, response) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const action = String(request.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
      const trace = request.headers['x-amzn-trace-id'] as string | undefined;
      let payload: { Entries?: SendEntry[] } & SendEntry = {};
      if (action === 'SendMessage' || action === 'SendMessageBatch') {
        payload = JSON.parse(body.toString('utf8') || '{}') as typeof payload;
        const entries = action === 'SendMessage' ? [payload] : (payload.Entries ?? []);
        for (const entry of entries) {
          const refusal = refusalOf(entry, maxMessageBytes);
          if (!refusal) continue;
          refused.push(refusal);
          response.writeHead(400, {
            'content-type': 'application/x-amz-json-1.0',
            'x-amzn-query-error': `${refusal.code};Sender`,
          });
          response.end(
            JSON.stringify({ __type: `com.amazonaws.sqs#${refusal.code}`, message: refusal.message }),
          );
          return;
        }
      }
      const answer = await forward(request.method ?? 'POST', request.url ?? '/', request.headers, body);
      if (trace && answer.status === 200 && (action === 'SendMessage' || action === 'SendMessageBatch')) {
        const parsed = JSON.parse(answer.body.toString('utf8')) as {
          MessageId?: string;
          Successful?: { MessageId: string }[];
        };
        const ids =
          action === 'SendMessage' ? [parsed.MessageId] : (parsed.Successful ?? []).map((s) => s.MessageId);
        for (const id of ids) if (id) traceHeaders.set(id, trace);
      }
      // The answer is read whole, so it goes on with its length (fauxqs' framing and connection
      // headers are its own link's).
      const headers = { ...endToEnd(answer.headers), 'content-length': String(answer.body.length) };
      response.writeHead(answer.status, headers);
      response.end(answer.body);
    } catch (error) {
      response.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify({ __type: 'com.amazonaws.sqs#InternalError', message: String(error) }));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    traceHeaders,
    refused,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
