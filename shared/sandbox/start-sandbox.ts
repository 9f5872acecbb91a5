/**
 * Start a sandbox: validate the options, listen, and hand back its URL, ledger, faults and `close`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FaultController } from './fault-controller';
import type { Ledger } from './ledger';
import { resolveOptions, type SandboxOptions } from './options';
import { SandboxServer } from './sandbox-server';
import type { SandboxStateReport } from './sandbox-state';

export interface Sandbox {
  /** Base URL, e.g. `http://127.0.0.1:43127` (no trailing slash). */
  url: string;
  port: number;
  /** The keys it accepts. */
  apiKeys: string[];
  ledger: Ledger;
  faults: FaultController;
  /**
   * With `stateFile`: whether the file was new, restored (and how many records), or could not be
   * used and was moved aside (and why). Undefined without a state file.
   */
  state: SandboxStateReport | undefined;
  /**
   * Stop listening and drop every connection, including stalled streams and calls waiting out an
   * injected latency; resolves once no request is being handled any more.
   */
  close(): Promise<void>;
}

/**
 * Start the sandbox. With no options it listens on a free port of 127.0.0.1, accepts
 * `SANDBOX_API_KEY`, follows `Date.now`, injects no faults and keeps its state in memory only.
 * Rejects on invalid options, and with `stateFile` when another live sandbox holds that file or the
 * file was written with another seed.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const resolved = resolveOptions(options);
  const sandbox = new SandboxServer(resolved);
  // Requests being handled, so close() returns only once none of them can still write anything.
  const handling = new Set<Promise<void>>();
  // Idle connections are kept 65 s, as most proxies and load balancers do (Node's default is 5 s):
  // the client retires its idle connections after 4 s, and on a loaded machine its timer can fire a
  // second late, so with a 5 s server a create written as the server closed the socket failed with
  // a reset (a create is never sent again, so the job failed).
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const handled = sandbox.handle(req, res).finally(() => handling.delete(handled));
    handling.add(handled);
  });
  try {
    const previous = resolved.portOmitted ? sandbox.previousPort : undefined;
    // The earlier sandbox's port, so the links it handed out still lead here; else any free one.
    const listened = previous
      ? await listen(server, previous, resolved.host).then(
          () => true,
          () => false,
        )
      : false;
    if (!listened) await listen(server, resolved.port, resolved.host);
    sandbox.listening((server.address() as AddressInfo).port);
  } catch (error) {
    server.close();
    sandbox.release();
    throw error;
  }
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
    state: sandbox.stateReport,
    close: () => {
      closing ??= (async () => {
        sandbox.shutdown();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        await Promise.all(handling);
        sandbox.release();
      })();
      return closing;
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
