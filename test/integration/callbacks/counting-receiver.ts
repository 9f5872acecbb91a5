/** A callback receiver on 127.0.0.1 that answers 204 and counts what it received (callback tests). */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingReceiver {
  server: Server;
  /** `http://127.0.0.1:<port>/hook`. */
  url: string;
  received(): number;
}

export async function startCountingReceiver(): Promise<CountingReceiver> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { server, url, received: () => received };
}
