/**
 * Start a sandbox: validate the options, listen, and hand back its URL, ledger, faults and `close`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FaultController } from './FaultController';
import type { Ledger } from './Ledger';
import { resolveOptions, type SandboxOptions } from './options';
import { SandboxServer } from './SandboxServer';

export interface Sandbox {
  /** Base URL, e.g. `http://127.0.0.1:43127` (no trailing slash). */
  url: string;
  port: number;
  /** The keys it accepts. */
  apiKeys: string[];
  ledger: Ledger;
  faults: FaultController;
  /**
   * Stop listening and drop every connection, including stalled streams and calls waiting out an
   * injected latency; resolves once no request is being handled any more.
   */
  close(): Promise<void>;
}

/**
 * Start the sandbox. With no options it listens on a free port of 127.0.0.1, accepts
 * `SANDBOX_API_KEY`, follows `Date.now`, and injects no faults. Rejects on invalid options.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const resolved = resolveOptions(options);
  const sandbox = new SandboxServer(resolved);
  // Requests being handled, so close() returns only once none of them can still write anything.
  const handling = new Set<Promise<void>>();
  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    const handled = sandbox.handle(req, res).finally(() => handling.delete(handled));
    handling.add(handled);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(resolved.port, resolved.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = resolved.host === '0.0.0.0' || resolved.host === '::' ? '127.0.0.1' : resolved.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  sandbox.baseUrl = url;
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    apiKeys: resolved.keys.map((key) => key.key),
    ledger: sandbox.ledger,
    faults: sandbox.faults,
    close: () => {
      closing ??= (async () => {
        sandbox.shutdown();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        await Promise.all(handling);
      })();
      return closing;
    },
  };
}
