/**
 * Logs and metrics of the Lambda functions, with Powertools: JSON log lines that carry the job id,
 * step, operation and correlation id; the pipeline's counters in namespace `opflow` (dimension
 * `service` only, which the stack's alarms and dashboard expect). Adapters turn these into the
 * engine's small logger and metrics interfaces. Traces are no business of the code: the stack's
 * `tracing` setting turns on Lambda's own active tracing or an OpenTelemetry layer that instruments
 * the function from outside (infra/lib/pipeline-function.ts), so no tracing SDK is bundled.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { EngineMetrics } from '../../engine/deps';
import type { Logger as OpflowLogger } from '../../log/logger';
import type { CallUsage } from '../../openplatform/types';

/** The pipeline's metric names (the stack's alarms and dashboard use these). */
export const pipelineMetricNames = [
  'StepsRun',
  'Retries',
  'UpstreamCalls',
  'BilledUnits',
  'JobSucceeded',
  'JobFailed',
] as const;

export interface Observability {
  logger: Logger;
  metrics: Metrics;
}

/**
 * Powertools for one function: service and namespace `opflow` unless `POWERTOOLS_SERVICE_NAME` /
 * `POWERTOOLS_METRICS_NAMESPACE` say otherwise.
 */
export function createObservability(): Observability {
  const serviceName = observedServiceName();
  return {
    logger: new Logger({ serviceName }),
    metrics: new Metrics({ serviceName, namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || 'opflow' }),
  };
}

/** The service name of logs, metrics and traces: `POWERTOOLS_SERVICE_NAME`, else `opflow`. */
export function observedServiceName(): string {
  return process.env.POWERTOOLS_SERVICE_NAME || 'opflow';
}

/** The engine's logger on a Powertools logger: fields become keys of the JSON line. */
export function engineLogger(logger: Logger): OpflowLogger {
  return {
    debug: (message, fields) => logger.debug(message, fields ?? {}),
    info: (message, fields) => logger.info(message, fields ?? {}),
    warn: (message, fields) => logger.warn(message, fields ?? {}),
    error: (message, fields) => logger.error(message, fields ?? {}),
  };
}

/**
 * The engine's counters as Powertools metrics. The engine's per-workflow dimensions are dropped:
 * every metric has the one `service` dimension the stack watches (the workflow is in the logs).
 */
export function engineMetrics(metrics: Metrics): EngineMetrics {
  return {
    count: (name, value = 1) => {
      metrics.addMetric(name, MetricUnit.Count, value);
    },
  };
}

/** Counts every upstream call and the units it was billed (from the client's `onUsage`). */
export function usageMetrics(metrics: Metrics): (usage: CallUsage) => void {
  return (usage) => {
    metrics.addMetric('UpstreamCalls', MetricUnit.Count, 1);
    if (usage.billedUnits > 0) metrics.addMetric('BilledUnits', MetricUnit.Count, usage.billedUnits);
  };
}
