/**
 * What `opflow ingest` and its aws half (ingest-aws.ts, loaded only with --backend aws) share: the
 * command's options and the empty-source warning. A file of its own so that ingest-aws.ts does not
 * import ingest.ts, which imports it.
 */
import type { BatchSourceKind } from '../../engine/batch-store';
import type { GlobalOptions } from '../context';

export interface IngestCommandOptions extends GlobalOptions {
  workflow: string;
  batch?: string | undefined;
  dryRun?: boolean | undefined;
  maxUnits?: string | undefined;
  failureBudget?: string | undefined;
  inFlight?: string | undefined;
  wait: boolean;
  tenant: string;
  select: string;
  deadline?: string | undefined;
  priority?: string | undefined;
}

/** Said when a source had nothing in it: most likely the wrong file, or an export that failed. */
export function emptySourceWarning(kind: BatchSourceKind, path: string): string {
  return kind === 'folder'
    ? `warning: ${path} holds no documents (hidden files are left out): the batch has nothing to run`
    : `warning: ${path} has no records (it is empty, holds only blank lines${kind === 'csv' ? ', or has a header row and nothing under it' : ''}): the batch has nothing to run`;
}
