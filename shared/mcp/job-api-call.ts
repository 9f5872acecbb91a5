/**
 * The MCP tools' way into the job API: a request to `handleJobApiRequest` (the code behind
 * `opflow serve` and the Lambda `api`), so an agent meets the same validation, tenant rule and
 * messages as any other caller; and a succeeded job's report files read through it.
 */
import type { EngineDeps } from '../engine/deps';
import { ApiError } from '../http/api-error';
import { type ApiRoute, handleJobApiRequest, jobIdSchema } from '../http/job-api';

export interface JobApiRequest {
  body?: unknown;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

/** One job API request; the answer's JSON, or an ApiError with the API's status, code and message. */
export type JobApiCall = (
  method: string,
  path: string,
  init?: JobApiRequest,
) => Promise<Record<string, unknown>>;

export const reportFormats = { md: 'report.md', html: 'report.html', json: 'result.json' } as const;
export type ReportFormat = keyof typeof reportFormats;

/** The API's messages name where the problem is (`body.selected: ...`); an agent sent arguments. */
export function forAgent(message: string): string {
  return message.replace(/(^|; )(body|query|path)\./g, '$1');
}

/** The job API (with `routes` beside its own) as a caller bound to `tenant` (if any) calls it. */
export function jobApiCall(
  deps: EngineDeps,
  tenant: string | undefined,
  routes: readonly ApiRoute[] = [],
): JobApiCall {
  return async (method, path, init = {}) => {
    const response = await handleJobApiRequest(
      {
        method,
        path,
        query: init.query,
        headers: { 'content-type': 'application/json', ...init.headers },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      },
      { deps, tenant, routes },
    );
    const answer = JSON.parse(response.body) as Record<string, unknown>;
    if (response.status >= 400) {
      const error = (answer.error ?? {}) as { code?: string; message?: string };
      throw new ApiError(
        response.status,
        error.code ?? 'error',
        forAgent(error.message ?? `the request failed (${response.status})`),
      );
    }
    return answer;
  };
}

/** The text of one report file of a succeeded job (the job API decides whether it may be read). */
export function reportReader(
  deps: EngineDeps,
  api: JobApiCall,
): (jobId: string, format: ReportFormat) => Promise<string> {
  return async (jobId, format) => {
    const id = jobIdSchema.safeParse(jobId);
    if (!id.success) throw new ApiError(400, 'invalid-request', `jobId: ${id.error.issues[0]?.message}`);
    const where = (await api('GET', `/jobs/${encodeURIComponent(jobId)}/report`, {
      query: { file: reportFormats[format] },
    })) as { files: { key: string; name: string }[] };
    const file = where.files.find((candidate) => candidate.name === reportFormats[format]);
    const stored = file === undefined ? undefined : await deps.reports.get(file.key);
    if (!stored) throw new ApiError(404, 'not-found', `job ${jobId} has no ${reportFormats[format]}`);
    return Buffer.from(stored.body).toString('utf8');
  };
}
