/**
 * The job API's types, generated from its OpenAPI document (GET /openapi.json) by openapi-typescript.
 * Do not edit: run `npx tsx scripts/generate-job-api-types.ts` after changing a route or an answer.
 */

export interface paths {
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Is the API up */
        get: operations["health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This description */
        get: operations["openapi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Jobs, newest first, with the filters of `opflow list` */
        get: operations["listJobs"];
        put?: never;
        /**
         * Start a job
         * @description The input must match the workflow (opflow workflows <name> lists each workflow's fields). Header Idempotency-Key: the same key returns the same job (200 instead of 201).
         */
        post: operations["createJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One job */
        get: operations["getJob"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}/selection": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Answer a job waiting for a selection (status AWAITING_INPUT)
         * @description `selected`: ids of `job.pending.options`, between `pending.min` and `pending.max` of them.
         */
        post: operations["answerSelection"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel a job that has not finished */
        post: operations["cancelJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a FAILED or CANCELLED job again
         * @description From the step it stopped at (steps that finished are not called again), or from its first step with fromStart. The ended run is kept in `job.runs`.
         */
        post: operations["retryJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/bulk": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Retry, redrive, cancel or answer every job a filter selects: a dry run, then the confirmed call
         * @description First {action, where, options, dryRun: true}: the count, a digest of the ids (selection) and a sample. Then the same body with confirm: {count, selection}: refused with 409 selection-changed (and the new dry run) when the set changed. A job changed meanwhile is skipped with the reason. A call acts for up to 20 s and answers a cursor to go on with.
         */
        post: operations["bulkJobs"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}/report": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Links to a succeeded job's report files
         * @description Locally (opflow serve) the links are paths of this server and do not expire; on AWS they are presigned S3 URLs valid until expiresAt.
         */
        get: operations["getReport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}/timeline": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The job's steps on a timeline: calls, durations, retries, polls, errors, billed units
         * @description From the job history (kept 30 days): recorded is false when none was kept.
         */
        get: operations["getTimeline"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Batches (bulk ingestions), newest first */
        get: operations["listBatches"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One batch: totals by status, calls, billed units, elapsed, ETA, its problems */
        get: operations["getBatch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{id}/redrive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run its failed and cancelled items again
         * @description Each from the step it stopped at, or from its first step with fromStart; deadlineMs gives each a new deadline (what helps items that failed on theirs).
         */
        post: operations["redriveBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Stop releasing its items and cancel its unfinished jobs */
        post: operations["cancelBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{id}/outputs/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** summary.csv, summary.xlsx, results.jsonl, failed.jsonl or index.html of a batch */
        get: operations["getBatchOutput"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schedules": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The schedules of opflow.config.json: next and last fire, last job, skipped slots, pause */
        get: operations["listSchedules"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schedules/{name}/trigger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a job of the schedule now */
        post: operations["triggerSchedule"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schedules/{name}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Skip its slots until resumed, with a reason (kept in the schedule state store) */
        post: operations["pauseSchedule"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schedules/{name}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Fire its slots again from now on (refused when opflow.config.json pauses it) */
        post: operations["resumeSchedule"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhook-deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Incoming webhook deliveries, newest first, kept 30 days */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhook-sources": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The webhook sources: state (open or capped, why, until when), caps, 24-hour spend, last delivery */
        get: operations["listWebhookSources"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{source}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A signed webhook (Standard Webhooks) starts a job; no bearer token, the signature authenticates */
        post: operations["receiveWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A token for GET /events, signed, valid 5 minutes, scoped to the caller’s tenant (opflow serve only)
         * @description A browser’s EventSource cannot send an Authorization header: it opens GET /events?token=… with this instead of the API token. A caller bound to a tenant gets its own; an operator may name one.
         */
        post: operations["createEventsToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Job, step and batch changes and streamed answers as they arrive: server-sent events (opflow serve), a long poll (AWS); resumable with Last-Event-ID
         * @description text/event-stream: `job` (created or a new status), `step` (a new step, poll or retry within a status), `answer` (a streamed answer’s new text with its offset, at most every 250 ms, on AWS every second; a new listener of one job gets the text so far first), `batch` (its totals, at most once a second), `reset` (resumed from before the changes kept: read the state again); each job, step and answer event has its change number as id. A heartbeat comment every 15 s; the stream ends when its token expires. Authenticated by ?token= (POST /events/token) or the bearer token. On AWS the HTTP API cannot stream: application/json `{events, cursor, wait}`, the events after Last-Event-ID (ids are cursors), waiting up to ?wait= seconds (default 20, at most the api function’s time left less 2 s: `wait` says the seconds granted) for the first; the next request sends the answer’s cursor as Last-Event-ID. Authenticated like every route (IAM or JWT), no token.
         */
        get: operations["events"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/review/{token}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A notice's signed link: the confirmation page of a selection; opening it answers nothing (opflow serve only) */
        get: operations["reviewPage"];
        put?: never;
        /** The confirmation page's form: answers the selection as the link's recipient (opflow serve only) */
        post: operations["reviewAnswer"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The MCP server for agents, Streamable HTTP (with opflow serve --mcp) (opflow serve only) */
        post: operations["mcp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The dashboard page (no token needed to load it) (opflow serve only) */
        get: operations["dashboard"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ui/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The dashboard's script, style and settings (opflow serve only) */
        get: operations["dashboardFile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}/input": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A job's input, workflow, label and selection, to run it again */
        get: operations["getJobInput"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batch-uploads/check": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A manifest checked line by line as opflow ingest --dry-run, with the cost estimate; nothing stored */
        post: operations["checkBatchUpload"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batch-uploads": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A manifest checked and started as a batch (on AWS through a presigned S3 upload); the same file again starts nothing twice */
        post: operations["startBatchUpload"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batch-uploads/commit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * AWS: documents sent by their presigned PUTs (POST /batch-uploads with documentFiles) start their batch once every one is in storage
         * @description The body is the one the PUTs were presigned for. Each document is looked up in the bucket (its size, SHA-256 and metadata); when all are there, the api writes the batch manifest last and the ingest function starts the batch. 409 names each document not there yet: send it again, then commit. Committing again starts nothing twice.
         */
        post: operations["commitBatchUpload"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/jobs/{id}/report/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A report file itself (opflow serve only) */
        get: operations["getReportFile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Error: {
            error: {
                status: number;
                /** @description not-found, invalid-request, conflict, forbidden, ... */
                code: string;
                /** @description what is wrong and where (body.field, query.field, path.id) */
                message: string;
                /** @description each field at fault (body.input.text) and what is wrong with it, when the request was held to a schema */
                issues?: {
                    path: string;
                    message: string;
                }[];
            };
        };
        Job: {
            id: string;
            workflow: string;
            tenant: string;
            /** @enum {string} */
            status: "QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED";
            /** @description the step it is at (or stopped at) */
            step: string;
            version: number;
            label?: string;
            /** @description the input's title or first line, else the label */
            title?: string;
            /** @description which upstream served the job: {kind: sandbox} (simulated data, not real publications) or {kind: platform, baseUrl, keyFingerprint}; absent before its first call */
            upstream?: {
                /** @constant */
                kind: "sandbox";
            } | {
                /** @constant */
                kind: "platform";
                baseUrl: string;
                keyFingerprint: string;
            };
            selection: {
                /** @enum {string} */
                mode: "auto" | "manual";
            };
            /** @description the options offered, while AWAITING_INPUT */
            pending?: {
                step: string;
                nextStep: string;
                prompt: string;
                options: {
                    /** @description what POST /jobs/{id}/selection names in `selected` */
                    id: string;
                    label: string;
                    detail?: string;
                    preselected: boolean;
                }[];
                min: number;
                max: number;
                /**
                 * Format: date-time
                 * @description ISO 8601, UTC
                 */
                offeredAt: string;
            };
            selections: {
                [key: string]: string[];
            };
            /** @description who answered each selection point, when and how */
            answers?: {
                /** @description the step whose options were answered */
                step: string;
                /** @description the chosen option ids */
                options: string[];
                /** @description the chosen options' labels as the person saw them, in the order of options */
                labels?: string[];
                /**
                 * @description how: a signed link, the CLI, the API, MCP, the dashboard, a bulk action, or the default at the timeout
                 * @enum {string}
                 */
                via: "link" | "cli" | "api" | "mcp" | "dashboard" | "timeout" | "bulk";
                /** @description who, when known (a name or mail address) */
                by?: string;
                /**
                 * Format: date-time
                 * @description ISO 8601, UTC
                 */
                at: string;
                /** @description the job's version that recorded it */
                version: number;
                /** @description false: a first approval, waiting for a second person */
                applied?: boolean;
            }[];
            /** @description the people notified of the selection awaited (reviewers config) */
            review?: {
                /** @description the reviewers' rule of the config that applies */
                rule: string;
                /** @description distinct people who must confirm */
                approvals: number;
                rounds: {
                    /** @description 1: the first notice; then one per reminder */
                    round: number;
                    deliveries: {
                        channel: string;
                        /** @enum {string} */
                        state: "sent" | "failed";
                        attempts: number;
                        /**
                         * Format: date-time
                         * @description ISO 8601, UTC
                         */
                        at: string;
                        error?: string;
                    }[];
                }[];
                /**
                 * Format: date-time
                 * @description ISO 8601, UTC
                 */
                nextNoticeAt?: string;
                /**
                 * Format: date-time
                 * @description when the default answer is applied if nobody answers
                 */
                timeoutAt?: string;
            };
            /** @description each selection point's approval rounds, labelled: round 1 the first approver, round 2 the second, the notices and reminders, the timeout with its default answer */
            selectionRounds?: {
                /** @description the step whose options were asked for */
                step: string;
                /** @description who answered, when, how and what, round by round */
                approvals: {
                    /** @description the step whose options were answered */
                    step: string;
                    /** @description the chosen option ids */
                    options: string[];
                    /** @description the chosen options' labels as the person saw them, in the order of options */
                    labels?: string[];
                    /**
                     * @description how: a signed link, the CLI, the API, MCP, the dashboard, a bulk action, or the default at the timeout
                     * @enum {string}
                     */
                    via: "link" | "cli" | "api" | "mcp" | "dashboard" | "timeout" | "bulk";
                    /** @description who, when known (a name or mail address) */
                    by?: string;
                    /**
                     * Format: date-time
                     * @description ISO 8601, UTC
                     */
                    at: string;
                    /** @description the job's version that recorded it */
                    version: number;
                    /** @description false: a first approval, waiting for a second person */
                    applied?: boolean;
                    /** @description 1: the first approver (or the one approver); 2: the second */
                    round: number;
                    /**
                     * @description what the answer was in the rounds
                     * @enum {string}
                     */
                    role: "approver" | "first approver" | "second approver" | "default at timeout";
                }[];
                /** @description the notices of the review at this step (reviewers config) */
                notices?: {
                    round: number;
                    /**
                     * @description the first notice, the call for a second approval once a first approver confirmed, a reminder, or the notice that the timeout took the default answer
                     * @enum {string}
                     */
                    label: "notice" | "call for the second approval" | "reminder" | "notice of the default taken";
                    deliveries: {
                        channel: string;
                        /** @enum {string} */
                        state: "sent" | "failed";
                        attempts: number;
                        /**
                         * Format: date-time
                         * @description ISO 8601, UTC
                         */
                        at: string;
                        error?: string;
                    }[];
                }[];
                timeout?: {
                    /**
                     * Format: date-time
                     * @description when the default answer is taken if nobody answers
                     */
                    at: string;
                    /** @description the option ids the default answer takes */
                    answer?: string[];
                    /** @description the default answer's option labels as the reviewers read them, in the order of answer */
                    labels?: string[];
                };
            }[];
            attempts: number;
            polls: number;
            /** @description upstream tasks this run created again because the platform no longer knew them ("task not found"): each a paid repeat, counted in usage.duplicateCreates */
            recreatedTasks?: number;
            lastError?: {
                step: string;
                operationId?: string;
                /** @enum {string} */
                kind: "auth" | "forbidden" | "not-found" | "invalid-request" | "throttled" | "quota-exhausted" | "busy" | "server" | "network" | "timeout" | "protocol" | "deadline" | "definition" | "poll-timeout" | "upstream-failed" | "storage" | "key-source" | "message-budget" | "record-too-large" | "cost-cap" | "internal";
                /** @description the platform's business error code */
                code?: number;
                message: string;
                retryable: boolean;
                httpStatus?: number;
                correlationId?: string;
                /**
                 * Format: date-time
                 * @description ISO 8601, UTC
                 */
                at: string;
            };
            usage: {
                calls: number;
                failedCalls: number;
                throttledCalls: number;
                billedUnits: number;
                tokens: number;
                /** @description time spent in upstream calls, milliseconds */
                callMs: number;
                /** @description create calls sent again for one step: after a crash, or by a retry that creates its task again (each a paid repeat) */
                duplicateCreates: number;
                /** @description billed reads (a poll, a count) sent again because a process died between the read and its commit (each a paid repeat); absent when none */
                duplicateReads?: number;
                /** @description the platform's own task_cost, summed, where it reports one */
                taskCost?: number;
            };
            outputs: string[];
            /** @description earlier runs, when the job was retried */
            runs?: {
                /** @enum {string} */
                status: "FAILED" | "CANCELLED";
                step: string;
                error?: {
                    step: string;
                    operationId?: string;
                    /** @enum {string} */
                    kind: "auth" | "forbidden" | "not-found" | "invalid-request" | "throttled" | "quota-exhausted" | "busy" | "server" | "network" | "timeout" | "protocol" | "deadline" | "definition" | "poll-timeout" | "upstream-failed" | "storage" | "key-source" | "message-budget" | "record-too-large" | "cost-cap" | "internal";
                    /** @description the platform's business error code */
                    code?: number;
                    message: string;
                    retryable: boolean;
                    httpStatus?: number;
                    correlationId?: string;
                    /**
                     * Format: date-time
                     * @description ISO 8601, UTC
                     */
                    at: string;
                };
                /**
                 * Format: date-time
                 * @description ISO 8601, UTC
                 */
                finishedAt?: string;
                usage: {
                    calls: number;
                    failedCalls: number;
                    throttledCalls: number;
                    billedUnits: number;
                    tokens: number;
                    /** @description time spent in upstream calls, milliseconds */
                    callMs: number;
                    /** @description create calls sent again for one step: after a crash, or by a retry that creates its task again (each a paid repeat) */
                    duplicateCreates: number;
                    /** @description billed reads (a poll, a count) sent again because a process died between the read and its commit (each a paid repeat); absent when none */
                    duplicateReads?: number;
                    /** @description the platform's own task_cost, summed, where it reports one */
                    taskCost?: number;
                };
                /**
                 * Format: date-time
                 * @description ISO 8601, UTC
                 */
                retriedAt: string;
                retriedFrom: string;
                fromStart: boolean;
            }[];
            batchId?: string;
            /**
             * @description how soon its calls get the key's tokens against other work (docs/concepts/admission.md)
             * @enum {string}
             */
            priority: "high" | "normal" | "low";
            /** @description the most billed units the job may spend; reaching it stops the job (FAILED, kind cost-cap) */
            maxUnits?: number;
            /** @enum {string} */
            source: "cli" | "api" | "webhook" | "schedule" | "bulk";
            idempotencyKey?: string;
            /** @description where the signed callback goes (its query elided) */
            callbackUrl?: string;
            /** @description the delivery of the callback */
            callback?: {
                /** @enum {string} */
                state: "pending" | "delivered" | "gone" | "refused" | "exhausted";
                round: number;
                messageId: string;
                attempts: {
                    round: number;
                    /**
                     * Format: date-time
                     * @description ISO 8601, UTC
                     */
                    at: string;
                    status?: number;
                    error?: string;
                    retryAfterMs?: number;
                    durationMs: number;
                }[];
                /**
                 * Format: date-time
                 * @description ISO 8601, UTC
                 */
                nextAttemptAt?: string;
                /**
                 * Format: date-time
                 * @description ISO 8601, UTC
                 */
                deliveredAt?: string;
            };
            /**
             * Format: date-time
             * @description when it is looked at next (absent once finished)
             */
            nextRunAt?: string;
            /**
             * Format: date-time
             * @description when the paid call under way was sent (absent when none is out; not yet in usage.calls)
             */
            callSince?: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            deadlineAt: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            updatedAt: string;
            /**
             * Format: date-time
             * @description ISO 8601, UTC
             */
            finishedAt?: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    health: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description up */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "ok";
                        /**
                         * Format: date-time
                         * @description ISO 8601, UTC
                         */
                        time: string;
                    };
                };
            };
        };
    };
    openapi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OpenAPI 3.1 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": unknown;
                };
            };
        };
    };
    listJobs: {
        parameters: {
            query?: {
                /** @description only jobs in this status */
                status?: "QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED";
                /** @description only jobs of this batch (a run, an ingest) */
                batchId?: string;
                /** @description only jobs of this tenant */
                tenant?: string;
                /** @description at most this many (a page may hold fewer and still have a cursor) */
                limit?: number;
                /** @description from the previous page */
                cursor?: string;
                /** @description only jobs of this workflow */
                workflow?: string;
                /** @description only jobs started this way (cli, api, webhook, schedule, bulk) */
                source?: "cli" | "api" | "webhook" | "schedule" | "bulk";
                /** @description created at or after (a date or an ISO 8601 time) */
                since?: string;
                /** @description created at or before (a date or an ISO 8601 time) */
                until?: string;
                /** @description words that must all appear in the label, title, id or input text */
                q?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a page of jobs */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        jobs: components["schemas"]["Job"][];
                        /** @description pass as ?cursor= for the next page */
                        cursor?: string;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description another tenant */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createJob: {
        parameters: {
            query?: never;
            header?: {
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    workflow: string;
                    input: unknown;
                    /** @default default */
                    tenant?: string;
                    /**
                     * @default {
                     *       "mode": "auto"
                     *     }
                     */
                    selection?: {
                        /** @constant */
                        mode: "auto";
                    } | {
                        /** @constant */
                        mode: "manual";
                    };
                    deadlineMs?: number;
                    label?: string;
                    metadata?: {
                        [key: string]: string | string[];
                    };
                    batchId?: string;
                    /** @enum {string} */
                    priority?: "high" | "normal" | "low";
                    maxUnits?: number;
                    /** Format: uri */
                    callbackUrl?: string;
                    /**
                     * @default api
                     * @enum {string}
                     */
                    source?: "api" | "webhook" | "schedule" | "bulk";
                };
            };
        };
        responses: {
            /** @description the job of this Idempotency-Key, already there */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        job: components["schemas"]["Job"];
                        created: boolean;
                    };
                };
            };
            /** @description created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        job: components["schemas"]["Job"];
                        created: boolean;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description another tenant */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflicts with the job's status or an earlier request with its Idempotency-Key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the job */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        job: components["schemas"]["Job"];
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    answerSelection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    selected: string[];
                    by?: string;
                    /**
                     * @default api
                     * @enum {string}
                     */
                    via?: "api" | "mcp" | "dashboard" | "bulk";
                };
            };
        };
        responses: {
            /** @description the job, going on */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        job: components["schemas"]["Job"];
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflicts with the job's status or an earlier request with its Idempotency-Key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    cancelJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the cancelled job */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        job: components["schemas"]["Job"];
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflicts with the job's status or an earlier request with its Idempotency-Key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    retryJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /**
                     * @description from the first step (paid calls already made count as repeats), not the step it stopped at
                     * @default false
                     */
                    fromStart?: boolean;
                    /** @description milliseconds from now for the new run (default: as long as the job had the first time) */
                    deadlineMs?: number;
                    /** @description a new cap of billed units for the job: a job stopped at its cost cap goes on only with a higher one */
                    maxUnits?: number;
                };
            };
        };
        responses: {
            /** @description the job, queued again */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        job: components["schemas"]["Job"];
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflicts with the job's status or an earlier request with its Idempotency-Key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    bulkJobs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description retry, redrive, cancel or answer
                     * @enum {string}
                     */
                    action: "retry" | "redrive" | "cancel" | "answer";
                    /** @default {} */
                    where?: {
                        /** @description only jobs in these statuses (within the ones the action acts on) */
                        status?: ("QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED")[];
                        /** @description only jobs of this workflow */
                        workflow?: string;
                        /** @description only jobs of this tenant */
                        tenant?: string;
                        /** @description only jobs of this batch */
                        batchId?: string;
                        /** @description only jobs whose label contains this text (case-insensitive) */
                        label?: string;
                        /** @description created at or after (a date means its start, UTC) */
                        createdAfter?: string;
                        /** @description created at or before (a date means its end, UTC) */
                        createdBefore?: string;
                        /**
                         * @description only jobs whose last error is of this kind (deadline, not-found, quota-exhausted, ...)
                         * @enum {string}
                         */
                        failureKind?: "auth" | "forbidden" | "not-found" | "invalid-request" | "throttled" | "quota-exhausted" | "busy" | "server" | "network" | "timeout" | "protocol" | "deadline" | "definition" | "poll-timeout" | "upstream-failed" | "storage" | "key-source" | "message-budget" | "record-too-large" | "cost-cap" | "internal";
                    };
                    /** @default {} */
                    options?: {
                        /** @description retry, redrive: from the first step (paid calls already made count as repeats) */
                        fromStart?: boolean;
                        /** @description retry, redrive: milliseconds from now for each new run (default: as long as each had) */
                        deadlineMs?: number;
                        /** @description answer: the option ids to choose in every job (a job not offering them is skipped) */
                        selected?: string[];
                        /**
                         * @description answer: each job's own defaults (the options the platform marked, or all of them)
                         * @enum {string}
                         */
                        take?: "defaults";
                        /** @description answer: who answers (kept in each job's answers, with how: bulk) */
                        by?: string;
                    };
                    /**
                     * @description count and sample what would change; change nothing
                     * @default false
                     */
                    dryRun?: boolean;
                    /** @description the count and selection of the dry run: the action runs only on that same set */
                    confirm?: {
                        /** @description the dry run's count */
                        count: number;
                        /** @description the dry run's selection (a digest of the ids it counted) */
                        selection: string;
                    };
                    /** @description from the previous answer: go on where it stopped */
                    cursor?: string;
                    /**
                     * @description jobs listed in a dry run (default 20)
                     * @default 20
                     */
                    sampleSize?: number;
                };
            };
        };
        responses: {
            /** @description the dry run, or what the call did */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        action: "retry" | "redrive" | "cancel" | "answer";
                        /** @description the filter, as applied (a tenant-bound caller: its tenant) */
                        where: {
                            /** @description only jobs in these statuses (within the ones the action acts on) */
                            status?: ("QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED")[];
                            /** @description only jobs of this workflow */
                            workflow?: string;
                            /** @description only jobs of this tenant */
                            tenant?: string;
                            /** @description only jobs of this batch */
                            batchId?: string;
                            /** @description only jobs whose label contains this text (case-insensitive) */
                            label?: string;
                            /** @description created at or after (a date means its start, UTC) */
                            createdAfter?: string;
                            /** @description created at or before (a date means its end, UTC) */
                            createdBefore?: string;
                            /**
                             * @description only jobs whose last error is of this kind (deadline, not-found, quota-exhausted, ...)
                             * @enum {string}
                             */
                            failureKind?: "auth" | "forbidden" | "not-found" | "invalid-request" | "throttled" | "quota-exhausted" | "busy" | "server" | "network" | "timeout" | "protocol" | "deadline" | "definition" | "poll-timeout" | "upstream-failed" | "storage" | "key-source" | "message-budget" | "record-too-large" | "cost-cap" | "internal";
                        };
                        options: {
                            /** @description retry, redrive: from the first step (paid calls already made count as repeats) */
                            fromStart?: boolean;
                            /** @description retry, redrive: milliseconds from now for each new run (default: as long as each had) */
                            deadlineMs?: number;
                            /** @description answer: the option ids to choose in every job (a job not offering them is skipped) */
                            selected?: string[];
                            /**
                             * @description answer: each job's own defaults (the options the platform marked, or all of them)
                             * @enum {string}
                             */
                            take?: "defaults";
                            /** @description answer: who answers (kept in each job's answers, with how: bulk) */
                            by?: string;
                        };
                        /** @constant */
                        dryRun: true;
                        /** @description jobs the action would act on now */
                        count: number;
                        /** @description a digest of their ids: send it back with count as confirm */
                        selection: string;
                        /** @description the statuses read: the action's, narrowed by where.status */
                        statuses: ("QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED")[];
                        sample: {
                            id: string;
                            workflow: string;
                            /** @enum {string} */
                            status: "QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED";
                            step: string;
                            tenant: string;
                            label?: string;
                            batchId?: string;
                            createdAt: string;
                            error?: {
                                kind: string;
                                message: string;
                            };
                            /** @description answer: the option ids the job offers */
                            options?: string[];
                            /** @description answer: the labels of the options, in the order of options (what a person reads) */
                            optionLabels?: string[];
                        }[];
                    } | {
                        /** @enum {string} */
                        action: "retry" | "redrive" | "cancel" | "answer";
                        /** @description the filter, as applied (a tenant-bound caller: its tenant) */
                        where: {
                            /** @description only jobs in these statuses (within the ones the action acts on) */
                            status?: ("QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED")[];
                            /** @description only jobs of this workflow */
                            workflow?: string;
                            /** @description only jobs of this tenant */
                            tenant?: string;
                            /** @description only jobs of this batch */
                            batchId?: string;
                            /** @description only jobs whose label contains this text (case-insensitive) */
                            label?: string;
                            /** @description created at or after (a date means its start, UTC) */
                            createdAfter?: string;
                            /** @description created at or before (a date means its end, UTC) */
                            createdBefore?: string;
                            /**
                             * @description only jobs whose last error is of this kind (deadline, not-found, quota-exhausted, ...)
                             * @enum {string}
                             */
                            failureKind?: "auth" | "forbidden" | "not-found" | "invalid-request" | "throttled" | "quota-exhausted" | "busy" | "server" | "network" | "timeout" | "protocol" | "deadline" | "definition" | "poll-timeout" | "upstream-failed" | "storage" | "key-source" | "message-budget" | "record-too-large" | "cost-cap" | "internal";
                        };
                        options: {
                            /** @description retry, redrive: from the first step (paid calls already made count as repeats) */
                            fromStart?: boolean;
                            /** @description retry, redrive: milliseconds from now for each new run (default: as long as each had) */
                            deadlineMs?: number;
                            /** @description answer: the option ids to choose in every job (a job not offering them is skipped) */
                            selected?: string[];
                            /**
                             * @description answer: each job's own defaults (the options the platform marked, or all of them)
                             * @enum {string}
                             */
                            take?: "defaults";
                            /** @description answer: who answers (kept in each job's answers, with how: bulk) */
                            by?: string;
                        };
                        /** @constant */
                        dryRun: false;
                        /** @description the count confirmed (the dry run's) */
                        count: number;
                        /** @description jobs acted on so far (every call of this run) */
                        done: number;
                        /** @description jobs skipped so far: changed since selected, or refused */
                        skipped: number;
                        /** @description ids acted on in this call (the first 20) */
                        doneSample: string[];
                        /** @description skipped in this call and why (the first 50) */
                        skippedSample: {
                            jobId: string;
                            reason: string;
                        }[];
                        /** @description redrive: the batches that run again */
                        batches: string[];
                        /** @description more to do: send the same request with this cursor */
                        cursor?: string;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description another tenant */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the set changed since the dry run */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: {
                            /** @constant */
                            status: 409;
                            /** @constant */
                            code: "selection-changed";
                            message: string;
                        };
                        /** @description the dry run of the set there is now */
                        preview: {
                            /** @enum {string} */
                            action: "retry" | "redrive" | "cancel" | "answer";
                            /** @description the filter, as applied (a tenant-bound caller: its tenant) */
                            where: {
                                /** @description only jobs in these statuses (within the ones the action acts on) */
                                status?: ("QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED")[];
                                /** @description only jobs of this workflow */
                                workflow?: string;
                                /** @description only jobs of this tenant */
                                tenant?: string;
                                /** @description only jobs of this batch */
                                batchId?: string;
                                /** @description only jobs whose label contains this text (case-insensitive) */
                                label?: string;
                                /** @description created at or after (a date means its start, UTC) */
                                createdAfter?: string;
                                /** @description created at or before (a date means its end, UTC) */
                                createdBefore?: string;
                                /**
                                 * @description only jobs whose last error is of this kind (deadline, not-found, quota-exhausted, ...)
                                 * @enum {string}
                                 */
                                failureKind?: "auth" | "forbidden" | "not-found" | "invalid-request" | "throttled" | "quota-exhausted" | "busy" | "server" | "network" | "timeout" | "protocol" | "deadline" | "definition" | "poll-timeout" | "upstream-failed" | "storage" | "key-source" | "message-budget" | "record-too-large" | "cost-cap" | "internal";
                            };
                            options: {
                                /** @description retry, redrive: from the first step (paid calls already made count as repeats) */
                                fromStart?: boolean;
                                /** @description retry, redrive: milliseconds from now for each new run (default: as long as each had) */
                                deadlineMs?: number;
                                /** @description answer: the option ids to choose in every job (a job not offering them is skipped) */
                                selected?: string[];
                                /**
                                 * @description answer: each job's own defaults (the options the platform marked, or all of them)
                                 * @enum {string}
                                 */
                                take?: "defaults";
                                /** @description answer: who answers (kept in each job's answers, with how: bulk) */
                                by?: string;
                            };
                            /** @constant */
                            dryRun: true;
                            /** @description jobs the action would act on now */
                            count: number;
                            /** @description a digest of their ids: send it back with count as confirm */
                            selection: string;
                            /** @description the statuses read: the action's, narrowed by where.status */
                            statuses: ("QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED")[];
                            sample: {
                                id: string;
                                workflow: string;
                                /** @enum {string} */
                                status: "QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED";
                                step: string;
                                tenant: string;
                                label?: string;
                                batchId?: string;
                                createdAt: string;
                                error?: {
                                    kind: string;
                                    message: string;
                                };
                                /** @description answer: the option ids the job offers */
                                options?: string[];
                                /** @description answer: the labels of the options, in the order of options (what a person reads) */
                                optionLabels?: string[];
                            }[];
                        };
                    };
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getReport: {
        parameters: {
            query?: {
                /** @description only this file, e.g. report.html */
                file?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the files */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        jobId: string;
                        files: {
                            key: string;
                            /** @description report.html, report.md, result.json, attachments/... */
                            name: string;
                            url: string;
                            /** @description local backend: where the file is on disk */
                            path?: string;
                            href?: string;
                        }[];
                    } | {
                        jobId: string;
                        expiresInSeconds: number;
                        /**
                         * Format: date-time
                         * @description ISO 8601, UTC
                         */
                        expiresAt: string;
                        files: {
                            key: string;
                            /** @description report.html, report.md, result.json, attachments/... */
                            name: string;
                            url: string;
                            /** @description local backend: where the file is on disk */
                            path?: string;
                            href?: string;
                        }[];
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflicts with the job's status or an earlier request with its Idempotency-Key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getTimeline: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the timeline */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        jobId: string;
                        /** @description false when no history was kept for the job: its figures are unknown, not 0 */
                        recorded: boolean;
                        steps: {
                            name: string;
                            title?: string;
                            /** @description the operationId it calls, or download */
                            operation?: string;
                            /** @enum {string} */
                            state: "done" | "current" | "waiting" | "failed" | "cancelled" | "pending" | "skipped";
                            /**
                             * Format: date-time
                             * @description when the job first reached the step
                             */
                            startedAt?: string;
                            /**
                             * Format: date-time
                             * @description when the job last left it
                             */
                            endedAt?: string;
                            /** @description time the job spent at the step, milliseconds */
                            durationMs?: number;
                            calls: number;
                            /** @description time spent in its upstream calls, milliseconds */
                            callMs: number;
                            billedUnits: number;
                            throttled: number;
                            /** @description failed attempts at the step */
                            retries: number;
                            polls: number;
                            errors: {
                                step: string;
                                operationId?: string;
                                /** @enum {string} */
                                kind: "auth" | "forbidden" | "not-found" | "invalid-request" | "throttled" | "quota-exhausted" | "busy" | "server" | "network" | "timeout" | "protocol" | "deadline" | "definition" | "poll-timeout" | "upstream-failed" | "storage" | "key-source" | "message-budget" | "record-too-large" | "cost-cap" | "internal";
                                /** @description the platform's business error code */
                                code?: number;
                                message: string;
                                retryable: boolean;
                                httpStatus?: number;
                                correlationId?: string;
                                /**
                                 * Format: date-time
                                 * @description ISO 8601, UTC
                                 */
                                at: string;
                            }[];
                            /** @description why the step was skipped: left out by the input (no call), or optional and failed */
                            skipped?: string;
                        }[];
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listBatches: {
        parameters: {
            query?: {
                /** @description at most this many */
                limit?: number;
                /** @description from the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a page of batches */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the batch */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    redriveBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /**
                     * @description from the first step (paid calls already made count as repeats), not the step it stopped at
                     * @default false
                     */
                    fromStart?: boolean;
                    /** @description milliseconds from now for the new run (default: as long as the job had the first time) */
                    deadlineMs?: number;
                    /** @description a new cap of billed units for the job: a job stopped at its cost cap goes on only with a higher one */
                    maxUnits?: number;
                };
            };
        };
        responses: {
            /** @description the batch */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    cancelBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the batch */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getBatchOutput: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                file: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the file */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/csv": unknown;
                    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": unknown;
                    "application/x-ndjson": unknown;
                    "text/html": unknown;
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listSchedules: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the schedules */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        schedules: {
                            name: string;
                            cron: string;
                            timezone: string;
                            workflow: string;
                            tenant: string;
                            /** @description skip, buffer-one or allow-all */
                            overlap: string;
                            /** @description the pause's reason (as pause.reason) */
                            paused?: string;
                            pause?: {
                                reason: string;
                                /**
                                 * @description config: lifted only by editing opflow.config.json
                                 * @enum {string}
                                 */
                                by: "config" | "runtime";
                                /**
                                 * Format: date-time
                                 * @description ISO 8601, UTC
                                 */
                                at?: string;
                            };
                            /**
                             * Format: date-time
                             * @description the next slot; none while paused
                             */
                            next?: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601, UTC
                             */
                            lastFired?: string;
                            lastJob?: {
                                id: string;
                                /** @enum {string} */
                                status: "QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED";
                            };
                            /** @description slots skipped (overlap, pause) */
                            skipped: number;
                            /** @description its cost caps and the last 24 hours’ spend against them; absent without caps */
                            caps?: {
                                maxUnitsPerRun?: number;
                                maxUnitsPerDay?: number;
                                /** @description billed units of its jobs created in the last 24 hours */
                                spentLast24h: number;
                                jobsLast24h: number;
                                /**
                                 * Format: date-time
                                 * @description at or past maxUnitsPerDay: when the 24 hours’ spend falls below it if nothing more is billed
                                 */
                                dayCapFreesAt?: string;
                            };
                        }[];
                    };
                };
            };
        };
    };
    triggerSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the job started */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        jobId: string;
                        /** @description false: the job of this trigger existed already */
                        created: boolean;
                        schedule: {
                            name: string;
                            cron: string;
                            timezone: string;
                            workflow: string;
                            tenant: string;
                            /** @description skip, buffer-one or allow-all */
                            overlap: string;
                            /** @description the pause's reason (as pause.reason) */
                            paused?: string;
                            pause?: {
                                reason: string;
                                /**
                                 * @description config: lifted only by editing opflow.config.json
                                 * @enum {string}
                                 */
                                by: "config" | "runtime";
                                /**
                                 * Format: date-time
                                 * @description ISO 8601, UTC
                                 */
                                at?: string;
                            };
                            /**
                             * Format: date-time
                             * @description the next slot; none while paused
                             */
                            next?: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601, UTC
                             */
                            lastFired?: string;
                            lastJob?: {
                                id: string;
                                /** @enum {string} */
                                status: "QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED";
                            };
                            /** @description slots skipped (overlap, pause) */
                            skipped: number;
                            /** @description its cost caps and the last 24 hours’ spend against them; absent without caps */
                            caps?: {
                                maxUnitsPerRun?: number;
                                maxUnitsPerDay?: number;
                                /** @description billed units of its jobs created in the last 24 hours */
                                spentLast24h: number;
                                jobsLast24h: number;
                                /**
                                 * Format: date-time
                                 * @description at or past maxUnitsPerDay: when the 24 hours’ spend falls below it if nothing more is billed
                                 */
                                dayCapFreesAt?: string;
                            };
                        };
                    };
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    pauseSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    reason: string;
                };
            };
        };
        responses: {
            /** @description the schedule */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        schedule: {
                            name: string;
                            cron: string;
                            timezone: string;
                            workflow: string;
                            tenant: string;
                            /** @description skip, buffer-one or allow-all */
                            overlap: string;
                            /** @description the pause's reason (as pause.reason) */
                            paused?: string;
                            pause?: {
                                reason: string;
                                /**
                                 * @description config: lifted only by editing opflow.config.json
                                 * @enum {string}
                                 */
                                by: "config" | "runtime";
                                /**
                                 * Format: date-time
                                 * @description ISO 8601, UTC
                                 */
                                at?: string;
                            };
                            /**
                             * Format: date-time
                             * @description the next slot; none while paused
                             */
                            next?: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601, UTC
                             */
                            lastFired?: string;
                            lastJob?: {
                                id: string;
                                /** @enum {string} */
                                status: "QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED";
                            };
                            /** @description slots skipped (overlap, pause) */
                            skipped: number;
                            /** @description its cost caps and the last 24 hours’ spend against them; absent without caps */
                            caps?: {
                                maxUnitsPerRun?: number;
                                maxUnitsPerDay?: number;
                                /** @description billed units of its jobs created in the last 24 hours */
                                spentLast24h: number;
                                jobsLast24h: number;
                                /**
                                 * Format: date-time
                                 * @description at or past maxUnitsPerDay: when the 24 hours’ spend falls below it if nothing more is billed
                                 */
                                dayCapFreesAt?: string;
                            };
                        };
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflicts with the job's status or an earlier request with its Idempotency-Key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    resumeSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the schedule */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        schedule: {
                            name: string;
                            cron: string;
                            timezone: string;
                            workflow: string;
                            tenant: string;
                            /** @description skip, buffer-one or allow-all */
                            overlap: string;
                            /** @description the pause's reason (as pause.reason) */
                            paused?: string;
                            pause?: {
                                reason: string;
                                /**
                                 * @description config: lifted only by editing opflow.config.json
                                 * @enum {string}
                                 */
                                by: "config" | "runtime";
                                /**
                                 * Format: date-time
                                 * @description ISO 8601, UTC
                                 */
                                at?: string;
                            };
                            /**
                             * Format: date-time
                             * @description the next slot; none while paused
                             */
                            next?: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601, UTC
                             */
                            lastFired?: string;
                            lastJob?: {
                                id: string;
                                /** @enum {string} */
                                status: "QUEUED" | "RUNNING" | "WAITING" | "AWAITING_INPUT" | "SUCCEEDED" | "FAILED" | "CANCELLED";
                            };
                            /** @description slots skipped (overlap, pause) */
                            skipped: number;
                            /** @description its cost caps and the last 24 hours’ spend against them; absent without caps */
                            caps?: {
                                maxUnitsPerRun?: number;
                                maxUnitsPerDay?: number;
                                /** @description billed units of its jobs created in the last 24 hours */
                                spentLast24h: number;
                                jobsLast24h: number;
                                /**
                                 * Format: date-time
                                 * @description at or past maxUnitsPerDay: when the 24 hours’ spend falls below it if nothing more is billed
                                 */
                                dayCapFreesAt?: string;
                            };
                        };
                    };
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflicts with the job's status or an earlier request with its Idempotency-Key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description only deliveries to this source */
                source?: string;
                /** @description at most this many */
                limit?: number;
                /** @description from the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a page of deliveries */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        deliveries: {
                            id: string;
                            source: string;
                            webhookId?: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601, UTC
                             */
                            at: string;
                            status: number;
                            jobId?: string;
                            created?: boolean;
                            error?: {
                                code: string;
                                message: string;
                            };
                            tenant: string;
                        }[];
                        cursor?: string;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookSources: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the sources (a tenant-bound caller: its tenant’s) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        sources: {
                            name: string;
                            /**
                             * @description config: declared in opflow.config.json; secret: known only by its signing secret (no mapping: the payload is a job request; tenant default; no caps)
                             * @enum {string}
                             */
                            origin: "config" | "secret";
                            /** @description the tenant of its jobs */
                            tenant: string;
                            /** @description the workflow it starts, or "from the payload" */
                            workflow: string;
                            /**
                             * @description capped: deliveries are answered 429 cost-cap until resumesAt
                             * @enum {string}
                             */
                            state: "open" | "capped";
                            /** @description why it is capped: the figures, and how it reopens */
                            reason?: string;
                            /**
                             * Format: date-time
                             * @description when a capped source takes deliveries again if nothing more is billed
                             */
                            resumesAt?: string;
                            /** @description its cost caps (if any) and the last 24 hours’ spend */
                            caps: {
                                maxUnitsPerRun?: number;
                                maxUnitsPerDay?: number;
                                /** @description billed units of its jobs created in the last 24 hours */
                                spentLast24h: number;
                                jobsLast24h: number;
                                /**
                                 * Format: date-time
                                 * @description at or past maxUnitsPerDay: when the 24 hours’ spend falls below it if nothing more is billed
                                 */
                                dayCapFreesAt?: string;
                            };
                            /** @description its newest delivery among the newest 1,000 recorded (kept 30 days); absent if none */
                            lastDelivery?: {
                                /**
                                 * Format: date-time
                                 * @description ISO 8601, UTC
                                 */
                                at: string;
                                /** @description the HTTP status it was answered */
                                status: number;
                                webhookId?: string;
                                jobId?: string;
                                error?: {
                                    code: string;
                                    message: string;
                                };
                            };
                        }[];
                    };
                };
            };
        };
    };
    receiveWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                source: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": unknown;
            };
        };
        responses: {
            /** @description the job (created, or found again for a repeated webhook-id) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not authenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description too many */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createEventsToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    tenant?: string;
                };
            };
        };
        responses: {
            /** @description the token and when it expires */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description another tenant */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    events: {
        parameters: {
            query?: {
                /** @description only this tenant (a token scoped to a tenant reads only its own) */
                tenant?: string;
                /** @description only the jobs and totals of this batch */
                batchId?: string;
                /** @description only this job */
                jobId?: string;
                /** @description from POST /events/token */
                token?: string;
                /** @description resume after this event id (what the Last-Event-ID header says, for a new EventSource) */
                lastEventId?: string;
                /** @description AWS: seconds to wait for a change when there is none, 0 to 20 (default 20) */
                wait?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the event stream (opflow serve), or the events and the next cursor (AWS) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": unknown;
                    "application/json": unknown;
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not authenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description another tenant */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    reviewPage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                token: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the question and its options, in a form */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description the job no longer waits for this selection (who answered) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description the link has expired */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
        };
    };
    reviewAnswer: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                token: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/x-www-form-urlencoded": unknown;
            };
        };
        responses: {
            /** @description the answer (or a first approval) is recorded */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description the choice is not valid: the form again, saying why */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description the link was changed or not made here */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
            /** @description the link has expired */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
        };
    };
    mcp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": unknown;
            };
        };
        responses: {
            /** @description a JSON-RPC answer or an event stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": unknown;
                    "text/event-stream": unknown;
                };
            };
        };
    };
    dashboard: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                };
            };
        };
    };
    dashboardFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                file: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the file */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": unknown;
                    "text/css": unknown;
                    "application/json": unknown;
                };
            };
        };
    };
    getJobInput: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the input */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    checkBatchUpload: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    fileName: string;
                    /** @description the manifest file's text (.jsonl, .ndjson, .csv or .tsv lines) */
                    manifest: string;
                    workflow: string;
                    batchName?: string;
                    /**
                     * @default auto
                     * @enum {string}
                     */
                    selection?: "auto" | "manual";
                    failureBudget?: string;
                    maxUnits?: number;
                    /** @default default */
                    tenant?: string;
                } | {
                    documents: {
                        name: string;
                        /** @description the document's bytes in base64 */
                        content: string;
                    }[];
                    workflow: string;
                    batchName?: string;
                    /**
                     * @default auto
                     * @enum {string}
                     */
                    selection?: "auto" | "manual";
                    failureBudget?: string;
                    maxUnits?: number;
                    /** @default default */
                    tenant?: string;
                } | {
                    documentFiles: {
                        name: string;
                        size: number;
                        sha256: string;
                    }[];
                    workflow: string;
                    batchName?: string;
                    /**
                     * @default auto
                     * @enum {string}
                     */
                    selection?: "auto" | "manual";
                    failureBudget?: string;
                    maxUnits?: number;
                    /** @default default */
                    tenant?: string;
                };
            };
        };
        responses: {
            /** @description the check */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description another tenant */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    startBatchUpload: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    fileName: string;
                    /** @description the manifest file's text (.jsonl, .ndjson, .csv or .tsv lines) */
                    manifest: string;
                    workflow: string;
                    batchName?: string;
                    /**
                     * @default auto
                     * @enum {string}
                     */
                    selection?: "auto" | "manual";
                    failureBudget?: string;
                    maxUnits?: number;
                    /** @default default */
                    tenant?: string;
                } | {
                    documents: {
                        name: string;
                        /** @description the document's bytes in base64 */
                        content: string;
                    }[];
                    workflow: string;
                    batchName?: string;
                    /**
                     * @default auto
                     * @enum {string}
                     */
                    selection?: "auto" | "manual";
                    failureBudget?: string;
                    maxUnits?: number;
                    /** @default default */
                    tenant?: string;
                } | {
                    documentFiles: {
                        name: string;
                        size: number;
                        sha256: string;
                    }[];
                    workflow: string;
                    batchName?: string;
                    /**
                     * @default auto
                     * @enum {string}
                     */
                    selection?: "auto" | "manual";
                    failureBudget?: string;
                    maxUnits?: number;
                    /** @default default */
                    tenant?: string;
                };
            };
        };
        responses: {
            /** @description opflow serve: the batch started */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description AWS: checked; PUT the manifest to upload.url with upload.headers (a presigned S3 URL bound to its SHA-256) and the ingest function starts batch batchId. For documentFiles: uploads[] holds one presigned PUT per document (bound to its length, SHA-256 and metadata); send each, then POST /batch-uploads/commit */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description another tenant */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflicts with the job's status or an earlier request with its Idempotency-Key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    commitBatchUpload: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    documentFiles: {
                        name: string;
                        size: number;
                        sha256: string;
                    }[];
                    workflow: string;
                    batchName?: string;
                    /**
                     * @default auto
                     * @enum {string}
                     */
                    selection?: "auto" | "manual";
                    failureBudget?: string;
                    maxUnits?: number;
                    /** @default default */
                    tenant?: string;
                };
            };
        };
        responses: {
            /** @description every document is there; the ingest function starts batch batchId */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description invalid request (what is wrong and where) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description another tenant */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflicts with the job's status or an earlier request with its Idempotency-Key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description body too large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getReportFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                file: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the file */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": unknown;
                    "text/markdown": unknown;
                    "application/json": unknown;
                    "application/pdf": unknown;
                };
            };
            /** @description no such job */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflicts with the job's status or an earlier request with its Idempotency-Key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
