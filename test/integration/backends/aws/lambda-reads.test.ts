// The Lambda reads of `opflow --backend aws doctor` through @aws-sdk/client-lambda, against a local HTTP
// server answering Lambda's REST routes as the service does: the requests are signed, every page of a
// function's event source mappings is read, and an error names the failing call.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concurrencyCheck, recursionCheck } from '../../../../shared/backends/aws/account-checks';
import { LambdaReads } from '../../../../shared/backends/aws/account-reads';

const seen: { method: string; url: string; authorization: string }[] = [];
let server: Server;
let endpoint: string;

function answer(request: IncomingMessage): { status: number; body: unknown } {
  const url = new URL(request.url ?? '/', 'http://lambda.local');
  if (url.pathname === '/2016-08-19/account-settings')
    return {
      status: 200,
      body: { AccountLimit: { ConcurrentExecutions: 10, UnreservedConcurrentExecutions: 10 } },
    };
  if (url.pathname === '/2019-09-30/functions/opflow-dev-step-worker/concurrency')
    return { status: 200, body: {} };
  if (url.pathname === '/2024-08-31/functions/opflow-dev-step-worker/recursion-config')
    return { status: 200, body: { RecursiveLoop: 'Allow' } };
  if (url.pathname.replace(/\/$/, '') === '/2015-03-31/event-source-mappings') {
    // Two pages: the second only with the first's marker.
    return url.searchParams.get('Marker') === 'page-2'
      ? { status: 200, body: { EventSourceMappings: [{ ScalingConfig: { MaximumConcurrency: 3 } }] } }
      : {
          status: 200,
          body: { EventSourceMappings: [{ ScalingConfig: { MaximumConcurrency: 5 } }], NextMarker: 'page-2' },
        };
  }
  return { status: 404, body: { Type: 'User', message: `Function not found: ${url.pathname}` } };
}

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push({
      method: request.method ?? '',
      url: request.url ?? '',
      authorization: String(request.headers.authorization ?? ''),
    });
    const { status, body } = answer(request);
    response.writeHead(status, {
      'content-type': 'application/json',
      ...(status === 404 ? { 'x-amzn-errortype': 'ResourceNotFoundException' } : {}),
    });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

describe('the Lambda reads of doctor', () => {
  it('reads the account, the function and every page of its event sources, signed', async () => {
    const lambda = new LambdaReads('us-east-1', credentials, endpoint);
    try {
      const account = await lambda.account();
      const worker = await lambda.function('worker', 'opflow-dev-step-worker');
      expect(account).toEqual({ limit: 10, unreserved: 10 });
      expect(worker).toEqual({
        role: 'worker',
        name: 'opflow-dev-step-worker',
        reserved: undefined,
        recursiveLoop: 'Allow',
        eventSourceCaps: [5, 3],
      });
      expect(concurrencyCheck(account, [worker]).status).toBe('ok');
      expect(recursionCheck([worker], ['worker']).status).toBe('ok');
      expect(seen.every((r) => r.method === 'GET')).toBe(true);
      expect(seen.every((r) => r.authorization.startsWith('AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/'))).toBe(
        true,
      );
      expect(seen.filter((r) => r.url.startsWith('/2015-03-31/event-source-mappings'))).toHaveLength(2);
    } finally {
      lambda.destroy();
    }
  });

  it('fails with the service message for a function that does not exist', async () => {
    const lambda = new LambdaReads('us-east-1', credentials, endpoint);
    try {
      await expect(lambda.function('api', 'opflow-dev-missing')).rejects.toThrow(/Function not found/);
    } finally {
      lambda.destroy();
    }
  });
});
