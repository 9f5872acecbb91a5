/**
 * The entry-points e2e tests' shared harness (ip-entry-points, drafting-entry-points): one real
 * `opflow serve --mcp` on the built-in sandbox, in a folder of its own with a config of schedules and
 * webhook mappings, a bearer token and one webhook secret for every mapping; and what those tests do
 * with it: call the job API, deliver a signed webhook (Standard Webhooks), submit through MCP's
 * Streamable HTTP, and wait for the jobs started to end.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Webhook } from 'standardwebhooks';
import { childEnv, type OpflowProcess } from '../e2e/local/opflow-process';
import { startServe } from '../e2e/local/serve-process';

/** A job as GET /jobs/{id} answers it, as far as these tests read it. */
export interface EntryJobView {
  id: string;
  workflow: string;
  status: string;
  source: string;
  label?: string;
  lastError?: { message: string };
}

/** A job started through an entry point: how it came, its workflow and its id. */
export interface StartedJob {
  via: 'api' | 'webhook' | 'mcp' | 'schedule';
  workflow: string;
  id: string;
}

/** The `source` a job records for each entry point (MCP's submit_job goes through the job API). */
export const sourceOfEntry: Record<StartedJob['via'], string> = {
  api: 'api',
  webhook: 'webhook',
  mcp: 'api',
  schedule: 'schedule',
};

/** An answer of the job API: its status and its JSON body, read by the tests as they need. */
// biome-ignore lint/suspicious/noExplicitAny: each test reads the answer's fields it asserts on
export type EntryAnswer = { status: number; body: any };

export interface EntryPoints {
  dir: string;
  env: NodeJS.ProcessEnv;
  url: string;
  serve: OpflowProcess;
  /** A job API call with the token; its answer text is kept in `answers` when one was given. */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<EntryAnswer>;
  /** A webhook delivery to `/webhooks/<source>`, signed with the secret. */
  deliver(source: string, messageId: string, payload: unknown): Promise<EntryAnswer>;
  /** An MCP client connected with the token, closed after `use`. */
  withMcp<T>(use: (client: Client) => Promise<T>): Promise<T>;
  /** MCP's submit_job: its text (kept in `answers`), whether it is an error, and the job's id. */
  submitJob(
    client: Client,
    workflow: string,
    input: unknown,
  ): Promise<{ text: string; isError: boolean; jobId: string }>;
  /** Reads the jobs every 250 ms until each has ended or `timeoutMs` passed: those ended, and those not. */
  settle(
    started: readonly StartedJob[],
    timeoutMs: number,
  ): Promise<{ done: EntryJobView[]; pending: string[] }>;
}

/**
 * Starts `opflow serve --mcp` (sandbox speed 1000) in a new folder named from `prefix` with `config`
 * as its opflow.config.json; `OPFLOW_WEBHOOK_SECRET_<NAME>` is `secret` for every webhook mapping.
 */
export async function startEntryPoints(options: {
  prefix: string;
  config: { webhooks: Record<string, unknown> };
  token: string;
  secret: string;
  answers?: string[];
}): Promise<EntryPoints> {
  const { token, secret, answers } = options;
  const dir = mkdtempSync(join(tmpdir(), options.prefix));
  writeFileSync(join(dir, 'opflow.config.json'), JSON.stringify(options.config));
  const env = childEnv({
    OPFLOW_SANDBOX_SPEED: '1000',
    OPFLOW_DB: join(dir, 'state', 'jobs.db'),
    OPFLOW_OUT: join(dir, 'out'),
    OPFLOW_SERVE_TOKEN: token,
    ...Object.fromEntries(
      Object.keys(options.config.webhooks).map((name) => [
        `OPFLOW_WEBHOOK_SECRET_${name.toUpperCase()}`,
        secret,
      ]),
    ),
  });
  const { run: serve, url } = await startServe(['--mcp'], { env, cwd: dir });

  const api: EntryPoints['api'] = async (method, path, body, headers = {}) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    answers?.push(text);
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  return {
    dir,
    env,
    url,
    serve,
    api,
    deliver: (source, messageId, payload) => {
      const body = JSON.stringify(payload);
      const at = new Date();
      return api('POST', `/webhooks/${source}`, body, {
        'webhook-id': messageId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(messageId, at, body),
      });
    },
    async withMcp(use) {
      const client = new Client({ name: 'opflow-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      try {
        return await use(client);
      } finally {
        await client.close();
      }
    },
    async submitJob(client, workflow, input) {
      const answer = (await client.callTool({
        name: 'submit_job',
        arguments: { workflow, input },
      })) as CallToolResult;
      const text = answer.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      answers?.push(text);
      return {
        text,
        isError: Boolean(answer.isError),
        jobId: (answer.structuredContent as { jobId: string } | undefined)?.jobId ?? '',
      };
    },
    async settle(started, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const pending = new Set(started.map((job) => job.id));
      const done: EntryJobView[] = [];
      while (pending.size > 0 && Date.now() < deadline) {
        for (const id of [...pending]) {
          const job = (await api('GET', `/jobs/${id}`)).body.job as EntryJobView;
          if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status)) {
            pending.delete(id);
            done.push(job);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      return { done, pending: [...pending] };
    },
  };
}
