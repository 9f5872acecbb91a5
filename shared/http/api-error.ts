/**
 * The one way opflow's HTTP APIs refuse a request: the job API and its routes, `opflow serve`'s
 * server, the webhook route and the Lambda api all throw an `ApiError` (or answer `refusal(...)`),
 * which goes out as `{ "error": { "status", "code", "message" } }`, JSON, `cache-control: no-store`,
 * with `issues` (`[{ "path", "message" }]`) when the request was held to a schema, so a form can
 * show each problem beside its field.
 */
import type { IssueAt } from '../errors/zod-issues';

/** An HTTP answer as the job API's adapters send it. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body is binary (a workbook), carried as base64 text: servers send its bytes. */
  base64?: true;
}

/** A refusal with its HTTP status, a stable code, a message saying what is wrong, and extra headers. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Each field at fault and what is wrong with it, when the request was held to a schema. */
    readonly issues?: readonly IssueAt[] | undefined,
  ) {
    super(message);
  }
}

/** A JSON answer (not cached: every answer of these APIs is about live state). */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): HttpAnswer {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}

/** The answer of a refusal. */
export function refusalAnswer(error: ApiError): HttpAnswer {
  return json(
    error.status,
    {
      error: {
        status: error.status,
        code: error.code,
        message: error.message,
        ...(error.issues?.length ? { issues: error.issues } : {}),
      },
    },
    error.headers,
  );
}

/** The answer of a refusal made on the spot. */
export function refusal(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): HttpAnswer {
  return refusalAnswer(new ApiError(status, code, message, headers));
}
