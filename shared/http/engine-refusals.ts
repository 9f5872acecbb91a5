/**
 * The HTTP status and code of each reason the engine refuses a request for (`JobRequestError`):
 * the engine says why, only shared/http says it in HTTP.
 */
import type { JobRequestRefusal } from '../engine/job-commands';

export const engineRefusals: Readonly<Record<JobRequestRefusal, { status: 400 | 404 | 409; code: string }>> =
  {
    invalid: { status: 400, code: 'invalid-request' },
    'not-found': { status: 404, code: 'not-found' },
    conflict: { status: 409, code: 'conflict' },
  };
