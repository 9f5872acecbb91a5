/**
 * Where the local runtime's upstream calls go, decided in one place: the API key of each tenant,
 * the base URL, and the built-in sandbox.
 *
 * - No key and no base URL configured: the built-in sandbox, started in-process, or shared with
 *   the opflow process of the same database that runs one (and taken over if that process dies).
 * - A loopback base URL and no key: `opflow sandbox` in another terminal, with its well-known key.
 * - Otherwise: the configured base URL (the platform by default) with the configured keys.
 *
 * The rule kept whatever is chosen: a tenant with its own key (`OPFLOW_API_KEY_<TENANT>`) talks to
 * the platform, and a key other than the sandbox's never goes to the built-in sandbox (every call is
 * routed by the key it carries, see key-routed-client.ts).
 */
import { EnvKeySource } from '../../backends/local';
import type { KeySource } from '../../engine/ports';
import type { UpstreamIdentity } from '../../engine/upstream-identity';
import { createOpenPlatformClient } from '../../openplatform/client';
import { redactUrl } from '../../openplatform/redact';
import type { OpenPlatformClient } from '../../openplatform/types';
import { describeStateReport, discardStateFile } from '../../sandbox';
import type { RuntimeTime } from '../time';
import { identifyUpstream } from '../upstream-identity';
import { defaultBuiltInSandboxSpeed, type LocalRuntimeConfig, usesBuiltInSandbox } from './config';
import { keyRoutedClient } from './key-routed-client';
import {
  type BuiltInSandbox,
  type SandboxLaunchOptions,
  sandboxApiKey,
  sandboxStatePath,
  startBuiltInSandbox,
} from './sandbox-launch';
import {
  findLiveSandbox,
  removeSandboxRecord,
  type SandboxRecord,
  sandboxRecordPath,
  writeSandboxRecord,
} from './sandbox-record';
import { sandboxTakeoverClient } from './sandbox-takeover';

/** The platform, for tenants with their own key while the built-in sandbox serves the others. */
export const platformBaseUrl = 'https://connect.patsnap.com';

export interface UpstreamOptions {
  config: Pick<LocalRuntimeConfig, 'apiKey' | 'baseUrl' | 'dbPath' | 'sandboxSpeed' | 'sandboxDrift'>;
  /** Per-tenant keys (`OPFLOW_API_KEY_<TENANT>`) are read from here. Default: `process.env`. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  time: RuntimeTime;
  /** Where the lines about the built-in sandbox go. */
  announce: (line: string) => void;
  /** Where tenants with their own key go while the built-in sandbox serves the others. */
  platformBaseUrl?: string | undefined;
  /** A client to use instead of one built from the configuration (tests). */
  client?: OpenPlatformClient | undefined;
  /** Passed to the built-in sandbox when it is started. */
  sandbox?: SandboxLaunchOptions | undefined;
  /** Nothing will call upstream (commands that only read job records): the client refuses. */
  recordsOnly?: boolean | undefined;
  /**
   * Whether any job of the database still has work to do: without one, the built-in sandbox's
   * state file is dropped before it starts (it would only grow run after run).
   */
  hasUnfinishedJobs: () => Promise<boolean>;
  /** Told when this process takes over the built-in sandbox of a process that died. */
  onTakeover?: (() => void) | undefined;
}

/** How the upstream was chosen (see `chooseUpstream`). */
export type UpstreamKind =
  /** No upstream calls at all (commands that only read job records). */
  | 'records-only'
  /** The built-in sandbox: started here, or shared with the process of the database that runs it. */
  | 'built-in'
  /** `opflow sandbox` at a loopback base URL and no key: the sandbox's well-known key. */
  | 'loopback-sandbox'
  /** The configured base URL (the platform by default) with the configured keys. */
  | 'configured';

/**
 * The decision alone, from the configuration (no side effects). A client given by the caller
 * (tests) stands in for the built-in sandbox too, so with one the choice is never `built-in`.
 */
export function chooseUpstream(
  config: Pick<LocalRuntimeConfig, 'apiKey' | 'baseUrl'>,
  options: { recordsOnly?: boolean | undefined; client?: OpenPlatformClient | undefined } = {},
): UpstreamKind {
  if (options.recordsOnly) return 'records-only';
  if (usesBuiltInSandbox(config) && !options.client) return 'built-in';
  if (config.apiKey === undefined && config.baseUrl !== undefined && isLoopback(config.baseUrl)) {
    return 'loopback-sandbox';
  }
  return 'configured';
}

export interface Upstream {
  readonly kind: UpstreamKind;
  /** The client every engine call goes through. */
  readonly client: OpenPlatformClient;
  /** Each tenant's key; the sandbox's well-known key for tenants without one when it is a sandbox. */
  readonly keys: KeySource;
  /** The base URL of the calls of tenants without their own key (undefined: the platform). */
  readonly baseUrl: string | undefined;
  /** How many times faster than the platform the upstream finishes tasks (poll schedules shrink to match). */
  readonly speed: number;
  /** The built-in sandbox when this process runs it (started here, or taken over later). */
  readonly sandbox: BuiltInSandbox | undefined;
  /** For people: the upstream, its URL without credentials. */
  readonly description: string;
  /** Which upstream a call with this key reaches (recorded on each job it serves). */
  identify(apiKey: string): UpstreamIdentity;
  /** Closes the client and, when this process runs it, the built-in sandbox. */
  close(): Promise<void>;
}

/** The built-in sandbox this process runs, and its record for other processes, once there is one. */
interface HeldSandbox {
  sandbox: BuiltInSandbox | undefined;
  recordPath: string | undefined;
}

type MakeClient = (url: string | undefined) => OpenPlatformClient;

/** What differs between the upstreams once chosen. */
interface UpstreamFields {
  client: OpenPlatformClient;
  fallbackKey?: string | undefined;
  baseUrl: string | undefined;
  speed: number;
  description: string;
}

/** Resolves the upstream of a local pipeline: starts or finds the built-in sandbox when it is chosen. */
export async function resolveUpstream(options: UpstreamOptions): Promise<Upstream> {
  const { config, time } = options;
  const kind = chooseUpstream(config, options);
  const makeClient: MakeClient = (url) =>
    createOpenPlatformClient({ baseUrl: url, now: () => time.clock.now() });
  const held: HeldSandbox = { sandbox: undefined, recordPath: undefined };
  const upstream = (fields: UpstreamFields) => upstreamOf(kind, options, held, fields);
  const description = config.baseUrl === undefined ? 'the Open Platform' : redactUrl(config.baseUrl);
  switch (kind) {
    case 'records-only':
      return upstream({
        client: options.client ?? recordsOnlyClient,
        baseUrl: config.baseUrl,
        speed: 1,
        description,
      });
    case 'loopback-sandbox':
      return upstream({
        client: options.client ?? makeClient(config.baseUrl),
        fallbackKey: sandboxApiKey,
        baseUrl: config.baseUrl,
        speed: config.sandboxSpeed ?? 1,
        description,
      });
    case 'configured':
      return upstream({
        client: options.client ?? makeClient(config.baseUrl),
        baseUrl: config.baseUrl,
        // A loopback endpoint is a local stand-in (a sandbox with a key of its own, a test double): the
        // sandbox speed setting applies to it too. The platform itself always runs at 1.
        speed: config.baseUrl !== undefined && isLoopback(config.baseUrl) ? (config.sandboxSpeed ?? 1) : 1,
        description,
      });
    case 'built-in':
      return builtInUpstream(options, held, makeClient, upstream);
  }
}

function upstreamOf(
  kind: UpstreamKind,
  options: UpstreamOptions,
  held: HeldSandbox,
  fields: UpstreamFields,
): Upstream {
  const { config } = options;
  return {
    kind,
    client: fields.client,
    keys: new EnvKeySource({ env: options.env, fallbackKey: fields.fallbackKey }),
    baseUrl: fields.baseUrl,
    speed: fields.speed,
    get sandbox() {
      return held.sandbox;
    },
    description: fields.description,
    identify: (apiKey) =>
      identifyUpstream(
        apiKey,
        // Beside the built-in sandbox, every other key is routed to the platform (key-routed-client.ts).
        kind === 'built-in'
          ? (options.platformBaseUrl ?? platformBaseUrl)
          : (config.baseUrl ?? platformBaseUrl),
      ),
    close: async () => {
      await fields.client.close();
      if (held.recordPath) removeSandboxRecord(held.recordPath);
      held.recordPath = undefined;
      await held.sandbox?.close();
    },
  };
}

/** The built-in sandbox: shared with the opflow process of this database that runs one, else started here. */
async function builtInUpstream(
  options: UpstreamOptions,
  held: HeldSandbox,
  makeClient: MakeClient,
  upstream: (fields: UpstreamFields) => Upstream,
): Promise<Upstream> {
  const { config, time } = options;
  const launch = (speed: number, stateFile: string | undefined) =>
    startBuiltInSandbox({
      ...options.sandbox,
      now: () => time.clock.now(),
      speed,
      ...(stateFile === undefined ? {} : { stateFile }),
      ...(config.sandboxDrift === undefined ? {} : { drift: config.sandboxDrift }),
    });
  let client: OpenPlatformClient | undefined;
  try {
    // Share a built-in sandbox another opflow process of this database is running: its tasks (a job
    // parked for a selection, say) exist only there.
    const shareable = config.dbPath !== ':memory:' && !time.skipping;
    const live: SandboxRecord | undefined = shareable
      ? await findLiveSandbox(sandboxRecordPath(config.dbPath))
      : undefined;
    const found = live
      ? shareLiveSandbox(options, live, held, makeClient, launch)
      : await startOwnSandbox(options, shareable, held, makeClient, launch);
    client = found.client;
    // A tenant's own key goes to the platform, never to the built-in sandbox.
    const routed = keyRoutedClient({
      sandbox: found.client,
      sandboxKey: sandboxApiKey,
      platform: () => makeClient(options.platformBaseUrl),
    });
    return upstream({
      client: routed,
      fallbackKey: sandboxApiKey,
      baseUrl: found.baseUrl,
      speed: found.speed,
      description: live ? redactUrl(live.url) : 'built-in sandbox',
    });
  } catch (error) {
    await client?.close().catch(() => undefined);
    if (held.recordPath) removeSandboxRecord(held.recordPath);
    await held.sandbox?.close().catch(() => undefined);
    throw error;
  }
}

type Launch = (speed: number, stateFile: string | undefined) => Promise<BuiltInSandbox>;

/** Uses the built-in sandbox of the live process `live`; if that process dies, this one takes it over. */
function shareLiveSandbox(
  options: UpstreamOptions,
  live: SandboxRecord,
  held: HeldSandbox,
  makeClient: MakeClient,
  launch: Launch,
) {
  const { config, announce } = options;
  announce(
    `opflow: using the built-in sandbox of opflow process ${live.pid} at ${live.url} (simulated data, ${live.speed}x speed)`,
  );
  const client = sandboxTakeoverClient({
    initial: live,
    recordPath: sandboxRecordPath(config.dbPath),
    makeClient,
    startSandbox: (takenSpeed) =>
      launch(takenSpeed, options.sandbox?.stateFile ?? sandboxStatePath(config.dbPath)),
    onHosted: (taken) => {
      held.sandbox = taken;
      held.recordPath = sandboxRecordPath(config.dbPath);
      options.onTakeover?.();
    },
    announce,
  });
  return { client, baseUrl: live.url, speed: live.speed };
}

/** Starts the built-in sandbox in this process, recorded beside the database for other processes. */
async function startOwnSandbox(
  options: UpstreamOptions,
  shareable: boolean,
  held: HeldSandbox,
  makeClient: MakeClient,
  launch: Launch,
) {
  const { config, announce } = options;
  const speed = config.sandboxSpeed ?? defaultBuiltInSandboxSpeed;
  // Its tasks outlive this process (kill -9 included) in a file beside the database; a file no
  // unfinished job needs any more is dropped, so it does not grow run after run.
  let stateFile = options.sandbox?.stateFile;
  if (stateFile === undefined && config.dbPath !== ':memory:') {
    stateFile = sandboxStatePath(config.dbPath);
    if (!(await options.hasUnfinishedJobs())) discardStateFile(stateFile);
  }
  const started = await launch(speed, stateFile);
  held.sandbox = started;
  if (shareable) {
    held.recordPath = sandboxRecordPath(config.dbPath);
    writeSandboxRecord(held.recordPath, { url: started.url, pid: process.pid, speed, startedAt: Date.now() });
  }
  announce(
    `opflow: no OPFLOW_API_KEY or OPFLOW_BASE_URL set, so using the built-in sandbox at ${started.url} (simulated data, ${speed}x speed)`,
  );
  const tenantKeys = tenantKeyVariables(options.env ?? process.env);
  if (tenantKeys.length > 0) {
    announce(
      `opflow: tenants with their own key (${tenantKeys.join(', ')}) talk to the platform; their keys never go to the sandbox`,
    );
  }
  const state = started.server.state;
  if (state?.outcome === 'moved-aside' || (state?.outcome === 'restored' && state.records > 0)) {
    announce(`opflow: built-in sandbox: ${describeStateReport(state)}`);
  }
  return { client: makeClient(started.url), baseUrl: started.url, speed };
}

/** The `OPFLOW_API_KEY_<TENANT>` variables set (names only). */
function tenantKeyVariables(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.keys(env).filter(
    (name) => /^OPFLOW_API_KEY_/.test(name) && name !== 'OPFLOW_API_KEY_SECRET_PREFIX' && env[name]?.trim(),
  );
}

const notForRecords = async (): Promise<never> => {
  throw new Error('this pipeline was opened for job records only; it makes no upstream calls');
};
const recordsOnlyClient: OpenPlatformClient = {
  call: notForRecords,
  callByName: notForRecords,
  request: notForRecords,
  stream: notForRecords,
  fetchDocument: notForRecords,
  close: async () => undefined,
};

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '::1' || host === '[::1]' || host.startsWith('127.');
}
