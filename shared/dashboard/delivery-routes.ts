/**
 * `GET /webhook-deliveries`: the record of incoming webhook deliveries (source, webhook-id, time,
 * the status answered, the job, the error), newest first (?source=&limit=&cursor=). A
 * framework-free route of the job API on `opflow serve` and the Lambda api, for the dashboard's
 * "Webhooks" page; a caller bound to a tenant sees only the deliveries of that tenant's sources.
 */
import type { WebhookDeliveryLog } from '../engine/webhook-deliveries';
import { ApiError, type ApiRoute, apiRoute, json, parse } from '../http/job-api';
import { deliveryQuerySchema } from '../http/request-schemas';

const iso = (ms: number) => new Date(ms).toISOString();

export function deliveryRoutes(options: { deliveries: WebhookDeliveryLog }): ApiRoute[] {
  return [
    apiRoute('listWebhookDeliveries', async (_params, request, { tenant }) => {
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
    }),
  ];
}
