/**
 * The MCP tool of bulk actions: `bulk_action`, through the job API's `POST /jobs/bulk` (so an
 * agent bound to a tenant acts on that tenant's jobs only). A dry run first; the real call sends
 * back its count and selection; a cursor goes on where a call stopped.
 */
import { bulkRequestSchema } from '../runtime/bulk-request';
import { defineTool, guarded, result } from './tool-spec';

export const bulkActionTool = defineTool({
  name: 'bulk_action',
  title: 'Bulk action',
  description:
    'Retry, redrive, cancel or answer every job a filter selects (status, workflow, tenant, batchId, label, createdAfter/Before, failureKind). First call with dryRun: true: it answers the count, a selection digest and a sample. Then the same arguments with confirm: {count, selection} instead of dryRun; a changed set is refused with the new count.',
  inputSchema: () => bulkRequestSchema,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  handler: ({ api }) =>
    guarded(async (args) => {
      const answer = (await api('POST', '/jobs/bulk', { body: args })) as {
        dryRun: boolean;
        count: number;
        selection?: string;
        cursor?: string;
      };
      const next = answer.dryRun
        ? answer.count === 0
          ? 'nothing matches: change the filter'
          : `show the user the count and sample; to act, call bulk_action again with the same action, where and options and confirm: {"count": ${answer.count}, "selection": "${answer.selection}"} instead of dryRun`
        : answer.cursor
          ? 'more to do: call bulk_action again with the same action, where and options and this cursor instead of confirm'
          : 'done: skippedSample says which jobs were skipped and why';
      return result({ ...answer, next });
    }),
});
