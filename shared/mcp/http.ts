/**
 * The MCP server over Streamable HTTP, for `opflow serve --mcp` at `/mcp`. Stateless: each POST
 * gets its own server and transport (the tools keep nothing between calls, jobs live in the
 * store), answered as JSON. The caller has passed the server's checks (Host, Origin, bearer token)
 * before it gets here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { errorMessage } from '../errors/error-message';
import type { ServerMount } from '../http/node-server';
import { createOpflowMcpServer, type OpflowMcpOptions } from './server';

/** The path the MCP endpoint is served at. */
export const mcpPath = '/mcp';

/** Answers one MCP request; `body` is the request body already read (and size-checked). */
export async function handleMcpHttpRequest(
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  options: OpflowMcpOptions,
): Promise<void> {
  let parsed: unknown;
  if (body.trim() !== '') {
    try {
      parsed = JSON.parse(body);
    } catch (error) {
      res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32700, message: `the request body is not JSON: ${errorMessage(error)}` },
        }),
      );
      return;
    }
  }
  const server = createOpflowMcpServer(options);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsed);
}

/** The `/mcp` mount of the job API server (same checks, same bearer token as the API). */
export function mcpMount(options: OpflowMcpOptions): ServerMount {
  return {
    matches: (path) => path === mcpPath,
    handle: async (req, res, { method, readBody }) => {
      if (method !== 'POST') {
        // Stateless, and nothing to say unasked: no event stream to open with GET (the transport
        // would hold one open for ever) and no session to end with DELETE (the MCP spec's 405).
        res.writeHead(405, { allow: 'POST', 'content-type': 'application/json; charset=utf-8' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: {
              code: -32000,
              message: `${method} /mcp is not supported: this server answers POST only`,
            },
          }),
        );
        return;
      }
      await handleMcpHttpRequest(req, res, await readBody(), options);
    },
  };
}
