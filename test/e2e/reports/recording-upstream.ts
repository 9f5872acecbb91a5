/**
 * An upstream opflow does not know: a real HTTP server of the test's own, with its own API key, that
 * records every request it receives (method, path, body) and answers it through a sandbox behind it
 * (so the workflows can finish). Tests read `requests` to see what left opflow.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BuiltInSandbox, startBuiltInSandbox } from '../../../shared/runtime/local/sandbox-launch';

export interface RecordedRequest {
  method: string;
  path: string;
  body: string;
}

export interface RecordingUpstream {
  url: string;
  apiKey: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Starts the recorder on a free port of 127.0.0.1, in front of a sandbox that accepts only `apiKey`. */
export async function startRecordingUpstream(apiKey: string, speed = 300): Promise<RecordingUpstream> {
  const behind: BuiltInSandbox = await startBuiltInSandbox({
    now: () => Date.now(),
    speed,
    keys: [{ key: apiKey }],
  });
  const target = new URL(behind.url);
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', body: body.toString('utf8') });
      const forwarded = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', (error) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await behind.close();
    },
  };
}
