/**
 * A small stand-in for API Gateway's HTTP API in front of the bundled `api` function: a real
 * node:http server on 127.0.0.1 that turns each request into a payload-2.0 event, invokes the
 * handler and writes back its result.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { httpApiEvent, lambdaContext } from './lambda-events';

export type ApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

export interface ApiGateway {
  url: string;
  /** JWT claims to attach to the next requests (a JWT authorizer's output), or undefined for IAM. */
  claims: Record<string, string> | undefined;
  close(): Promise<void>;
}

export async function startApiGateway(handler: ApiHandler): Promise<ApiGateway> {
  const gateway: { claims: Record<string, string> | undefined } = { claims: undefined };
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', 'http://gateway');
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
    }
    try {
      const result = (await handler(
        httpApiEvent({
          method: request.method ?? 'GET',
          path: url.pathname,
          rawQuery: url.search.slice(1),
          headers,
          body: chunks.length > 0 ? Buffer.concat(chunks).toString('utf8') : undefined,
          jwtClaims: gateway.claims,
        }),
        lambdaContext('opflow-api', 10_000),
      )) as APIGatewayProxyStructuredResultV2;
      response.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>);
      response.end(result.body ?? '');
    } catch (error) {
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
