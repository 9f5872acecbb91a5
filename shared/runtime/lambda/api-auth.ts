/**
 * How the job API's callers authenticate and who among JWT callers is an operator: the schema the
 * stack's `api.auth` is validated with at synth (infra/config.ts) and the api function reads back
 * from OPFLOW_API_AUTH at start, so both sides agree on one shape.
 */
import * as z from 'zod';
import { errorMessage } from '../../errors/error-message';
import { formatIssues } from '../../errors/zod-issues';

/**
 * Who may call as an operator with a JWT: a token whose `claim` (default `cognito:groups`) contains
 * one of `groups`, or, without `groups`, whose `claim` is `true`. Nothing else makes a JWT an operator's.
 */
export const operatorGrantSchema = z.strictObject({
  claim: z.string().min(1).max(256).default('cognito:groups'),
  groups: z.array(z.string().min(1).max(256)).min(1).max(50).optional(),
});
export type OperatorGrant = z.output<typeof operatorGrantSchema>;

/** How the API's callers authenticate (the stack's `api.auth`, passed as OPFLOW_API_AUTH). */
export const apiAuthSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('iam') }),
  z.strictObject({ mode: z.literal('jwt'), operators: operatorGrantSchema.optional() }),
]);
export type ApiAuth = z.output<typeof apiAuthSchema>;

/** The api function's variable that carries {@link ApiAuth} as JSON. */
export const API_AUTH_VARIABLE = 'OPFLOW_API_AUTH';

/** OPFLOW_API_AUTH (JSON), or IAM when unset. A value that does not parse stops the function's start. */
export function apiAuthFromEnv(env: Readonly<Record<string, string | undefined>>): ApiAuth {
  const raw = env[API_AUTH_VARIABLE]?.trim();
  if (!raw) return { mode: 'iam' };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new Error(`OPFLOW_API_AUTH is not JSON: ${errorMessage(error)}`);
  }
  const parsed = apiAuthSchema.safeParse(value);
  if (!parsed.success) throw new Error(`OPFLOW_API_AUTH: ${formatIssues(parsed.error)}`);
  return parsed.data;
}
