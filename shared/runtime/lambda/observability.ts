/**
 * Logs, metrics and traces of the Lambda functions, with Powertools: JSON log lines that carry the
 * job id, step, operation and correlation id; the pipeline's counters in namespace `opflow`
 * (dimension `service` only, which the stack's alarms and dashboard expect); X-Ray traces of the AWS
 * SDK calls. Adapters turn these into the engine's small logger and metrics interfaces.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
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
  /** Absent in functions that do not trace (see tracing.ts). */
  tracer?: Tracer | undefined;
}

/**
 * Powertools for one function: service and namespace `opflow` unless `POWERTOOLS_SERVICE_NAME` /
 * `POWERTOOLS_METRICS_NAMESPACE` say otherwise. With `tracer` (tracing.ts's `createTracer`, which
 * only the step worker imports), the SDK calls are traced.
 */
export function createObservability(options: { tracer?: Tracer | undefined } = {}): Observability {
  const serviceName = observedServiceName();
  return {
    logger: new Logger({ serviceName }),
    metrics: new Metrics({ serviceName, namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || 'opflow' }),
    ...(options.tracer ? { tracer: options.tracer } : {}),
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

/**
 * Runs `work` in its own X-Ray subsegment (a no-op outside Lambda or without a tracer), recording `annotations` and
 * any error, and restoring the parent segment afterwards.
 */
export async function traced<T>(
  tracer: Tracer | undefined,
  name: string,
  annotations: Record<string, string | number>,
  work: () => Promise<T>,
): Promise<T> {
  if (!tracer?.isTracingEnabled()) return work();
  const parent = tracer.getSegment();
  const segment = parent?.addNewSubsegment(name);
  if (segment) tracer.setSegment(segment);
  try {
    for (const [key, value] of Object.entries(annotations)) tracer.putAnnotation(key, value);
    return await work();
  } catch (error) {
    segment?.addError(error as Error);
    throw error;
  } finally {
    segment?.close();
    if (parent) tracer.setSegment(parent);
  }
}
