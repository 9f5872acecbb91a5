/**
 * A small stand-in for API Gateway's HTTP API in front of the bundled `api` function: a real
 * node:http server on 127.0.0.1 that turns each request into a payload-2.0 event, invokes the
 * handler and writes back its result, with the limits the real services put on that path:
 * - the HTTP API takes a request of at most 10 MB: a larger one is answered 413 `Request Entity Too Large`;
 * - Lambda takes a synchronous invocation of at most 6 MB (6,291,456 bytes) of event, and gives back
 *   at most 6 MB of response: past either, the function fails and the gateway answers 500
 *   `Internal Server Error`;
 * - the function stops at its timeout (the template's `Timeout`): 500 `Internal Server Error`;
 * - the gateway waits for the integration at most its `TimeoutInMillis` (30 s at most, and by
 *   default): past it, 503 `Service Unavailable`, whatever the function does afterwards.
 * Each refusal carries `x-harness-limit` naming the limit (a header only this stand-in sends).
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { httpApiEvent, lambdaContext } from './lambda-events';

export type ApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

/** The HTTP API's largest request payload (10 MB). */
export const HTTP_API_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
/** The HTTP API's longest (and default) integration timeout. */
export const HTTP_API_MAX_INTEGRATION_TIMEOUT_MS = 30_000;
/** Lambda's largest synchronous invocation payload, request and response each (6 MB). */
export const LAMBDA_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;

export interface ApiGatewayLimits {
  /** The integration's `TimeoutInMillis` (default and at most 30 s). */
  integrationTimeoutMs?: number | undefined;
  /** The function's `Timeout` (default 10 s, the stack's api function). */
  functionTimeoutMs?: number | undefined;
  /**
   * Routes integrated with another function, as the stack integrates `POST /webhooks/{source}` with
   * the webhooks function: a request whose path matches goes to that handler instead.
   */
  otherFunctions?: readonly { path: RegExp; functionName: string; handler: ApiHandler }[] | undefined;
}

export interface ApiGateway {
  url: string;
  /** JWT claims to attach to the next requests (a JWT authorizer's output), or undefined for IAM. */
  claims: Record<string, string> | undefined;
  close(): Promise<void>;
}

class LimitPassed extends Error {
  constructor(
    readonly status: number,
    readonly answer: string,
    readonly limit: string,
  ) {
    super(`${limit}: ${answer}`);
  }
}

const tooLarge = () => new LimitPassed(413, 'Request Entity Too Large', 'http-api-payload-10MB');
const lambdaFailed = (limit: string) => new LimitPassed(500, 'Internal Server Error', limit);

/**
 * The request's body, refused as the HTTP API refuses it once it passes 10 MB (read to its end all
 * the same, so the client is answered rather than cut off mid-send).
 */
async function readRequestBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size <= HTTP_API_MAX_PAYLOAD_BYTES) chunks.push(chunk as Buffer);
  }
  if (size > HTTP_API_MAX_PAYLOAD_BYTES) throw tooLarge();
  return chunks.length > 0 ? Buffer.concat(chunks) : undefined;
}

/** The handler's answer, or the failure Lambda and the gateway would make of it. */
async function invoke(
  handler: ApiHandler,
  functionName: string,
  event: APIGatewayProxyEventV2,
  limits: Pick<Required<ApiGatewayLimits>, 'integrationTimeoutMs' | 'functionTimeoutMs'>,
): Promise<APIGatewayProxyStructuredResultV2> {
  if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_SYNC_PAYLOAD_BYTES) {
    throw lambdaFailed('lambda-request-payload-6MB');
  }
  const timers: NodeJS.Timeout[] = [];
  const after = (ms: number, error: LimitPassed) =>
    new Promise<never>((_, reject) => timers.push(setTimeout(() => reject(error), ms)));
  try {
    const result = (await Promise.race([
      handler(event, lambdaContext(functionName, limits.functionTimeoutMs)),
      after(limits.functionTimeoutMs, lambdaFailed('lambda-function-timeout')),
      after(
        limits.integrationTimeoutMs,
        new LimitPassed(503, 'Service Unavailable', 'http-api-integration-timeout'),
      ),
    ])) as APIGatewayProxyStructuredResultV2;
    if (Buffer.byteLength(JSON.stringify(result)) > LAMBDA_SYNC_PAYLOAD_BYTES) {
      throw lambdaFailed('lambda-response-payload-6MB');
    }
    return result;
  } finally {
    for (const timer of timers) clearTimeout(timer);
  }
}

export async function startApiGateway(
  handler: ApiHandler,
  options: ApiGatewayLimits = {},
): Promise<ApiGateway> {
  const limits = {
    integrationTimeoutMs: Math.min(
      options.integrationTimeoutMs ?? HTTP_API_MAX_INTEGRATION_TIMEOUT_MS,
      HTTP_API_MAX_INTEGRATION_TIMEOUT_MS,
    ),
    functionTimeoutMs: options.functionTimeoutMs ?? 10_000,
  };
  const gateway: { claims: Record<string, string> | undefined } = { claims: undefined };
  const server: Server = createServer(async (request, response) => {
    try {
      const body = await readRequestBody(request);
      const url = new URL(request.url ?? '/', 'http://gateway');
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
      }
      const event = httpApiEvent({
        method: request.method ?? 'GET',
        path: url.pathname,
        rawQuery: url.search.slice(1),
        headers,
        body: body?.toString('utf8'),
        jwtClaims: gateway.claims,
      });
      const other = options.otherFunctions?.find((route) => route.path.test(url.pathname));
      const result = await invoke(
        other?.handler ?? handler,
        other?.functionName ?? 'opflow-api',
        event,
        limits,
      );
      // As API Gateway does: each entry of `cookies` becomes a set-cookie header.
      const cookies = result.cookies?.length ? { 'set-cookie': result.cookies } : {};
      response.writeHead(result.statusCode ?? 200, {
        ...(result.headers as Record<string, string>),
        ...cookies,
      });
      // As API Gateway does: a body marked isBase64Encoded (a workbook) goes out as its bytes.
      response.end(result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : (result.body ?? ''));
    } catch (error) {
      if (error instanceof LimitPassed) {
        response.writeHead(error.status, {
          'content-type': 'application/json',
          'x-harness-limit': error.limit,
        });
        response.end(JSON.stringify({ message: error.answer }));
        return;
      }
      // What API Gateway answers when the integration fails.
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: 'Internal Server Error', cause: String(error) }));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(gateway, {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
