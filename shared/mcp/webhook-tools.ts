/**
 * The MCP tool of webhook sources: `list_webhook_sources`, through the job API's `GET
 * /webhook-sources` (so an agent bound to a tenant sees that tenant's sources only): each source's
 * state (open, or capped with why and until when), caps, 24-hour spend and last delivery.
 */
import * as z from 'zod';
import { defineTool, guarded, result } from './tool-spec';

export const listWebhookSourcesTool = defineTool({
  name: 'list_webhook_sources',
  title: 'List webhook sources',
  description:
    "The webhook sources of opflow.config.json: each one's state (open, or capped with the reason and resumesAt: its deliveries are refused 429 cost-cap until then), its caps, the last 24 hours' billed units and its last delivery.",
  inputSchema: () => z.strictObject({}),
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: ({ api }) =>
    guarded(async () => {
      const answer = (await api('GET', '/webhook-sources')) as { sources: { state: string }[] };
      const capped = answer.sources.filter((source) => source.state === 'capped').length;
      return result({
        ...answer,
        next:
          capped === 0
            ? 'every source takes deliveries'
            : `${capped} source(s) capped: tell the user the reason and resumesAt; raising maxUnitsPerDay in opflow.config.json reopens one at once`,
      });
    }),
});
