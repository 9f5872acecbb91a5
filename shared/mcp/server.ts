/**
 * opflow as an MCP server (on the official SDK): the job API's routes as tools an agent can call.
 *
 * The tools are the table of shared/mcp/tools.ts; each goes through `handleJobApiRequest`, the
 * code behind `opflow serve` and the Lambda `api` (shared/mcp/job-api-call.ts), so an agent meets
 * the same validation, the same tenant rule and the same error messages as any other caller. A
 * succeeded job's report is also the resource opflow://jobs/{id}/report.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { WebhookSource } from '../config/opflow-config';
import type { BatchRunner } from '../dashboard/batch-runner';
import { webhookSourceRoutes } from '../dashboard/webhook-source-routes';
import type { BatchStore } from '../engine/batch-store';
import type { EngineDeps } from '../engine/deps';
import type { WebhookDeliveryLog } from '../engine/webhook-deliveries';
import { ApiError } from '../http/api-error';
import { type JobApiCall, jobApiCall, reportReader } from './job-api-call';
import type { ToolContext, WorkflowNames } from './tool-spec';
import { mcpTools } from './tools';

export { ingestRootsFrom } from './ingest-paths';

export interface OpflowMcpOptions {
  deps: EngineDeps;
  /** The tenant the caller is bound to (as in the job API); absent: the caller names it. */
  tenant?: string | undefined;
  /** The server's version as announced to clients. */
  version?: string | undefined;
  /** The batches (get_batch); with a runner, also bulk ingestion of files on this machine (ingest). */
  batches?: BatchStore | undefined;
  batchRunner?: BatchRunner | undefined;
  /** Relative ingest paths are resolved against this. Default: the process's working directory. */
  cwd?: string | undefined;
  /** The folders `ingest` may read under (real paths compared). Default: `cwd`. */
  ingestRoots?: readonly string[] | undefined;
  /** The config's webhook sources and their deliveries (list_webhook_sources). Default: none. */
  webhookSources?:
    | {
        webhooks: Readonly<Record<string, WebhookSource>>;
        deliveries: WebhookDeliveryLog;
        /** The sources known only by their signing secret (locally: localSecretSources). */
        secretSources?: readonly string[] | undefined;
      }
    | undefined;
}

const instructions =
  'opflow runs the Open Platform Intelligence API workflows as durable jobs. Call list_workflows ' +
  'for the inputs, submit_job to start one (it answers at once with the job id), then get_job ' +
  'every few seconds until the status is SUCCEEDED (read it with get_report), FAILED or ' +
  'CANCELLED, or AWAITING_INPUT (choose options with answer_selection).';

/** Builds the server with every tool it can offer and the report resource; connect it to a transport. */
export function createOpflowMcpServer(options: OpflowMcpOptions): McpServer {
  const { deps } = options;
  const [first, ...rest] = [...deps.workflows.keys()].sort();
  if (first === undefined) throw new Error('the MCP server needs at least one workflow');
  const workflowNames: WorkflowNames = [first, ...rest];
  const sources = options.webhookSources;
  const api = jobApiCall(
    deps,
    options.tenant,
    webhookSourceRoutes({
      deps,
      webhooks: sources?.webhooks ?? {},
      deliveries: sources?.deliveries ?? { record: async () => {}, list: async () => ({ deliveries: [] }) },
      secretSources: sources?.secretSources,
    }),
  );
  const cwd = options.cwd ?? process.cwd();
  const ctx: ToolContext = {
    deps,
    tenant: options.tenant,
    api,
    reportText: reportReader(deps, api),
    batches: options.batches,
    batchRunner: options.batchRunner,
    cwd,
    ingestRoots: options.ingestRoots ?? [cwd],
  };
  const server = new McpServer({ name: 'opflow', version: options.version ?? '0.1.0' }, { instructions });
  for (const tool of mcpTools) tool.register(server, ctx, workflowNames);
  registerReportResource(server, api, ctx.reportText);
  return server;
}

/** `opflow://jobs/{id}/report`: a succeeded job's report in Markdown; listed for the latest 50. */
function registerReportResource(
  server: McpServer,
  api: JobApiCall,
  reportText: ToolContext['reportText'],
): void {
  server.registerResource(
    'report',
    new ResourceTemplate('opflow://jobs/{id}/report', {
      list: async () => {
        const page = (await api('GET', '/jobs', { query: { status: 'SUCCEEDED', limit: '50' } })) as {
          jobs: { id: string; label?: string; workflow: string }[];
        };
        return {
          resources: page.jobs.map((job) => ({
            uri: `opflow://jobs/${job.id}/report`,
            name: `${job.workflow} ${job.label ?? job.id}`,
            mimeType: 'text/markdown',
          })),
        };
      },
    }),
    {
      title: 'Job report',
      description: "A succeeded job's report in Markdown",
      mimeType: 'text/markdown',
    },
    async (uri, variables) => {
      const id = String(variables.id);
      try {
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: await reportText(id, 'md') }] };
      } catch (error) {
        if (error instanceof ApiError) throw new Error(error.message);
        throw new Error('the request failed; try again later');
      }
    },
  );
}
