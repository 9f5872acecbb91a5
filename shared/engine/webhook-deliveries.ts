/**
 * The port of the record of incoming webhook deliveries: one entry per request to a known source
 * (one that has a signing secret), whatever was answered (a job started or found again, a bad
 * signature, an unmappable payload, too many requests), so a person can see what arrived and why
 * it did or did not start a job. Requests for sources with no secret are not recorded: anybody can
 * send them, and they would fill the record. Entries are kept 30 days (locally deleted as new ones
 * come, at most once an hour; on aws the table's TTL).
 */

export interface WebhookDelivery {
  /** Unique, time-ordered (a ULID). */
  id: string;
  source: string;
  /** The `webhook-id` header, when the request had a usable one. */
  webhookId?: string | undefined;
  /** When it was answered (epoch ms). */
  at: number;
  /** The HTTP status it was answered with (202 for a job, 4xx for a refusal, 500). */
  status: number;
  /** The job it started, or found again for a repeated delivery. */
  jobId?: string | undefined;
  /** False for a repeated delivery that answered an existing job. */
  created?: boolean | undefined;
  /** The refusal's code and message (never a header or payload value). */
  error?: { code: string; message: string } | undefined;
  /** The tenant of the source's jobs. */
  tenant: string;
}

export interface WebhookDeliveryQuery {
  source?: string | undefined;
  tenant?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

export interface WebhookDeliveryLog {
  record(delivery: WebhookDelivery): Promise<void>;
  /** Newest first; a cursor this log did not hand out is refused with a RangeError. */
  list(query: WebhookDeliveryQuery): Promise<{ deliveries: WebhookDelivery[]; cursor?: string | undefined }>;
}

export const defaultDeliveryRetentionMs = 30 * 24 * 3600 * 1000;
