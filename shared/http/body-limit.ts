/**
 * The job API's body limit and its refusal (413), the same from `opflow serve` and from the
 * Lambda api: the limit, and what to do instead. A request that starts a job is told that an image
 * sent as data (base64, a third larger) does not fit past about three quarters of the limit, and
 * which workflows take images by URL or from files; a manifest upload is sent to `opflow ingest`.
 */
import type { WorkflowRegistry } from '../engine/workflow';
import { ApiError } from './api-error';

/** The largest request body the job API reads when its server names none: 1 MiB. */
export const defaultMaxBodyBytes = 1024 * 1024;

/** Room left in a job request for everything but the image's base64 (workflow, names, options). */
const requestOverheadBytes = 2 * 1024;

/** "1 MiB (1048576 bytes)", or the bytes alone when the limit is no whole number of MiB. */
function limitText(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB (${bytes} bytes)` : `${bytes} bytes`;
}

/** The largest image that fits as base64 in a body of `limit` bytes, rounded down to 10 KB. */
export function largestImageAsData(limit: number): number {
  const bytes = (Math.max(0, limit - requestOverheadBytes) * 3) / 4;
  return Math.floor(bytes / 1024 / 10) * 10 * 1024;
}

/** The names of the workflows that take images (they turn an image file into an input). */
function imageWorkflows(workflows: WorkflowRegistry | undefined): string[] {
  return [...(workflows?.values() ?? [])].filter((workflow) => workflow.fromImage).map((w) => w.name);
}

/** What a caller whose body was over `limit` for `method path` can do instead ('' when nothing helps). */
function whatToDo(
  limit: number,
  method: string,
  path: string,
  workflows: WorkflowRegistry | undefined,
): string {
  if (method === 'POST' && /^\/batch-uploads(\/check)?\/?$/.test(path))
    return ' A larger manifest goes through `opflow ingest <manifest>` on the machine that runs opflow.';
  const images = imageWorkflows(workflows);
  if (method !== 'POST' || !/^\/jobs\/?$/.test(path) || images.length === 0) return '';
  const largest = largestImageAsData(limit);
  const fits =
    largest === 0
      ? 'An image does not fit as data under this limit'
      : `An image sent as data (base64) takes a third more, so one over about ${largest / 1024} KB does not fit`;
  return (
    ` ${fits}: for ${images.join(' or ')}, give each image as {"url": "https://..."}, which the platform fetches` +
    ' (up to 4,096 KB), or start the jobs from the image files with `opflow run <workflow> <files>` or' +
    ' `opflow ingest <folder> --workflow <workflow>` (on aws, `opflow --backend aws ingest` uploads them' +
    ' to the inbox).'
  );
}

/**
 * The 413 refusal of a body over `limit` bytes sent to `method path`. `workflows` names the
 * workflows that take images in the advice to a request that starts a job.
 */
export function bodyTooLarge(
  limit: number,
  request: { method: string; path: string },
  workflows?: WorkflowRegistry,
): ApiError {
  const method = request.method.toUpperCase();
  return new ApiError(
    413,
    'body-too-large',
    `the request body is over ${limitText(limit)}, this API's limit.${whatToDo(limit, method, request.path, workflows)}`,
  );
}
