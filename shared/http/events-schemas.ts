/**
 * What the live feed's routes accept: the query of `GET /events` and the body of
 * `POST /events/token`. The route table names them and `GET /openapi.json` describes them.
 */
import * as z from 'zod';
import { tenantNameSchema } from '../engine/job-commands';

/** An event id: the change's sequence number. */
export const eventIdSchema = z
  .string()
  .regex(/^\d{1,15}$/, 'is not an event id (the id: of an event this feed sent)')
  .transform(Number);

/**
 * An event id as a client sends it back (`Last-Event-ID`, `?lastEventId=`): a change number on
 * `opflow serve`, a change log cursor on aws (`<ms>-<sequence>`); each server checks its own form.
 */
export const eventCursorSchema = z
  .string()
  .regex(/^[0-9a-z-]{1,64}$/, 'is not an event id (the id: of an event this feed sent)');

/** How long a long poll waits for a change, in seconds: 0 to 20 (API Gateway ends a request at 30 s). */
export const longPollWaitSchema = z
  .string()
  .regex(/^\d{1,2}$/, 'is not a whole number of seconds')
  .transform(Number)
  .pipe(z.number().max(20, 'is over 20 seconds (API Gateway ends a request at 30 s)'));

/** The query of `GET /events`. */
export const eventsQuerySchema = z.strictObject({
  tenant: tenantNameSchema.optional(),
  batchId: z.string().min(1).max(100).optional(),
  jobId: z
    .string()
    .regex(/^[0-9A-Za-z_-]{1,64}$/, 'is not a job id')
    .optional(),
  token: z.string().min(1).max(2000).optional(),
  lastEventId: eventCursorSchema.optional(),
  wait: longPollWaitSchema.optional(),
});

/** The body of `POST /events/token`. */
export const eventsTokenBodySchema = z.strictObject({
  tenant: tenantNameSchema.optional(),
});
