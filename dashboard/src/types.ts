/**
 * The shapes the dashboard reads, taken from the server's own types (erased at build time): the
 * job API's answer schemas (shared/http/openapi.ts, which the tests hold every route's real
 * answers to), the batch view and the settings file. A route changing its answer fails the
 * dashboard's typecheck.
 */
import type * as z from 'zod';
import type { DashboardSettings } from '../../shared/dashboard/files';
import type { BatchProblem } from '../../shared/engine/batch-store';
import type { answerSchemas, JobView } from '../../shared/http/openapi';
import type { BatchView } from '../../shared/ingest/batch-view';

export type { BatchView, JobView };
export type JobError = NonNullable<JobView['lastError']>;
export type PendingSelection = NonNullable<JobView['pending']>;
export type JobUsage = JobView['usage'];
export type JobPage = z.input<typeof answerSchemas.list>;
export type Timeline = z.input<typeof answerSchemas.timeline>;
export type TimelineStep = Timeline['steps'][number];
export type ReportAnswer = z.input<typeof answerSchemas.report>;
export type ReportFile = ReportAnswer['files'][number];
export type ScheduleView = z.input<typeof answerSchemas.schedule>['schedule'];
export type DeliveryPage = z.input<typeof answerSchemas.deliveries>;
export type BulkPreview = Extract<z.input<typeof answerSchemas.bulk>, { dryRun: true }>;
export type BulkOutcome = Extract<z.input<typeof answerSchemas.bulk>, { dryRun: false }>;
export type { BulkRequestInput } from '../../shared/runtime/bulk-request';
export type Delivery = DeliveryPage['deliveries'][number];
/** `GET /webhook-sources`. */
export type WebhookSourceList = z.input<typeof answerSchemas.webhookSources>;
export type WebhookSource = WebhookSourceList['sources'][number];

/** `GET /batches`. */
export interface BatchList {
  batches: BatchView[];
  cursor?: string | undefined;
}
/** `GET /batches/{id}`. */
export interface BatchAnswer {
  batch: BatchView;
  problems: Omit<BatchProblem, 'batchId' | 'run'>[];
  problemCount: number;
}

/** What `ui/config.json` says, with the defaults filled in. */
export type Settings = DashboardSettings & { statuses: string[]; sources: string[] };

/** A request to the job API: JSON in, JSON (or text) out; a refusal throws an `ApiError`. */
export type Api = <T = unknown>(method: 'GET' | 'POST', path: string, payload?: unknown) => Promise<T>;

/** The page the address names. */
export type Route =
  | {
      page: 'jobs' | 'overview' | 'batches' | 'schedules' | 'webhooks' | 'new' | 'upload' | 'bulk';
      id?: undefined;
      query: URLSearchParams;
    }
  | { page: 'job' | 'report' | 'batch'; id: string; query: URLSearchParams };
