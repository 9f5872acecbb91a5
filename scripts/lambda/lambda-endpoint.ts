/**
 * Lambda's Invoke API on this machine, for asynchronous invocations only (`InvocationType: Event`,
 * what opflow's functions send): the function's queue (async-invoke.ts) takes the event with the
 * caller's trace header, and the answer is 202, as Lambda's. The functions reach it through
 * `AWS_ENDPOINT_URL_LAMBDA`. An unknown function is a 404 ResourceNotFoundException, another
 * invocation type a 400, as a caller would meet them.
 */
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AsyncInvoker } from './async-invoke';

export interface LambdaEndpoint {
  /** The endpoint to give as AWS_ENDPOINT_URL_LAMBDA. */
  url: string;
  close(): Promise<void>;
}

function refuse(response: ServerResponse, status: number, type: string, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
  response.end(JSON.stringify({ Type: 'User', message }));
}

/** Serves the Invoke API for `functions` (by function name). */
export async function startLambdaEndpoint(
  functions: ReadonlyMap<string, AsyncInvoker>,
): Promise<LambdaEndpoint> {
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(request.url ?? '');
    if (request.method !== 'POST' || !match)
      return refuse(
        response,
        404,
        'UnknownOperationException',
        `not an Invoke: ${request.method} ${request.url}`,
      );
    // A name, or an ARN whose last part (before a qualifier) is the name.
    const target = decodeURIComponent(match[1] ?? '');
    const name = target.startsWith('arn:') ? (target.split(':')[6] ?? target) : target;
    const invoker = functions.get(name);
    if (!invoker) return refuse(response, 404, 'ResourceNotFoundException', `Function not found: ${target}`);
    const type = String(request.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    if (type !== 'Event')
      return refuse(
        response,
        400,
        'InvalidParameterValueException',
        `only InvocationType Event is served here, not ${type}`,
      );
    let event: unknown;
    try {
      event = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      return refuse(
        response,
        400,
        'InvalidRequestContentException',
        'Could not parse request body into json',
      );
    }
    invoker.enqueue(event, request.headers['x-amzn-trace-id'] as string | undefined);
    response.writeHead(202, { 'content-type': 'application/json' });
    response.end('');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
