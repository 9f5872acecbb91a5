/**
 * How an MCP tool of opflow is described: name, title, description, zod input schema, hints, and
 * a handler. shared/mcp/server.ts builds the server's tool list from the table of these
 * (shared/mcp/tools.ts); the handler's arguments are typed by the schema the SDK validates with.
 */
import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type * as z from 'zod';
import type { BatchRunner } from '../dashboard/batch-runner';
import type { BatchStore } from '../engine/batch-store';
import type { EngineDeps } from '../engine/deps';
import { ApiError } from '../http/api-error';
import type { JobApiCall, ReportFormat } from './job-api-call';

/** The workflows' names, sorted (never empty: an enum of them is a tool's schema). */
export type WorkflowNames = readonly [string, ...string[]];

/** What a tool's handler works with. */
export interface ToolContext {
  deps: EngineDeps;
  /** The tenant the caller is bound to (as in the job API); absent: the caller names it. */
  tenant: string | undefined;
  /** One request to the job API, as this caller. */
  api: JobApiCall;
  /** The text of one report file of a succeeded job. */
  reportText(jobId: string, format: ReportFormat): Promise<string>;
  batches: BatchStore | undefined;
  batchRunner: BatchRunner | undefined;
  /** Relative ingest paths are resolved against this. */
  cwd: string;
  /** The folders `ingest` may read under. */
  ingestRoots: readonly string[];
}

/** A tool as the server sees it. */
export interface McpTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly annotations: ToolAnnotations;
  /** The arguments' schema (the workflows' names make some of them). */
  inputSchema(workflowNames: WorkflowNames): z.ZodObject;
  /** Adds the tool to `server`, unless this server lacks what it needs (the batches, say). */
  register(server: McpServer, ctx: ToolContext, workflowNames: WorkflowNames): void;
}

export interface ToolSpec<Schema extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  inputSchema: (workflowNames: WorkflowNames) => Schema;
  /** The handler for this server, or undefined when the server does not offer the tool. */
  handler: (ctx: ToolContext) => ToolCallback<Schema> | undefined;
}

export function defineTool<Schema extends z.ZodObject>(spec: ToolSpec<Schema>): McpTool {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    annotations: spec.annotations,
    inputSchema: spec.inputSchema,
    register(server, ctx, workflowNames) {
      const handler = spec.handler(ctx);
      if (handler === undefined) return;
      const { name, title, description, annotations } = spec;
      server.registerTool(
        name,
        { title, description, inputSchema: spec.inputSchema(workflowNames), annotations },
        handler,
      );
    },
  };
}

/** A tool's answer: the value as JSON text, and as structured content. */
export function result(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

/** A refusal (shared/http's ApiError, as the job API's) goes to the agent as an MCP tool error with its message. */
export function refusal(error: unknown): CallToolResult {
  if (error instanceof ApiError) {
    return {
      isError: true,
      content: [{ type: 'text', text: error.message }],
      structuredContent: { error: { status: error.status, code: error.code, message: error.message } },
    };
  }
  // Unexpected failures: no internals (paths, stacks) go to the agent; the engine's log has them.
  return {
    isError: true,
    content: [{ type: 'text', text: 'the request failed; try again later' }],
  };
}

/** A handler whose failures reach the agent as `refusal` says. */
export function guarded<Args>(
  handler: (args: Args) => Promise<CallToolResult>,
): (args: Args) => Promise<CallToolResult> {
  return async (args) => {
    try {
      return await handler(args);
    } catch (error) {
      return refusal(error);
    }
  };
}
