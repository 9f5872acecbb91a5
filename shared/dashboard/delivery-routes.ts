/**
 * `GET /webhook-deliveries`: the record of incoming webhook deliveries (source, webhook-id, time,
 * the status answered, the job, the error), newest first (?source=&limit=&cursor=). A
 * framework-free route of the job API on `opflow serve` and the Lambda api, for the dashboard's
 * "Webhooks" page; a caller bound to a tenant sees only the deliveries of that tenant's sources.
 */
import * as z from 'zod';
import type { WebhookDeliveryLog } from '../engine/webhook-deliveries';
import { ApiError, type ApiRoute, json, parse } from '../http/job-api';
import { webhookSourcePattern } from '../http/webhooks';

export const deliveryQuerySchema = z.strictObject({
  source: z.string().regex(webhookSourcePattern, 'is not a webhook source name').optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(100).optional(),
});

const iso = (ms: number) => new Date(ms).toISOString();

export function deliveryRoutes(options: { deliveries: WebhookDeliveryLog }): ApiRoute[] {
  return [
    {
      method: 'GET',
      pattern: /^\/webhook-deliveries$/,
      run: async (_match, request, { tenant }) => {
        const query = parse(deliveryQuerySchema, request.query ?? {}, 'query');
        try {
          const page = await options.deliveries.list({ ...query, tenant });
          return json(200, {
            deliveries: page.deliveries.map((delivery) => ({ ...delivery, at: iso(delivery.at) })),
            cursor: page.cursor,
          });
        } catch (error) {
          if (error instanceof RangeError)
            throw new ApiError(400, 'invalid-request', 'query.cursor: is not a cursor this API handed out');
          throw error;
        }
      },
    },
  ];
}
