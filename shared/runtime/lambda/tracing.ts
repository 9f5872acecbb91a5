/**
 * The X-Ray tracer (Powertools), imported only by the functions where tracing pays: the step worker,
 * whose steps make several SDK and upstream calls. The X-Ray SDK it loads is some 100 KiB of bundle
 * and a noticeable part of a cold start, so the api and sweeper functions leave it out (Lambda's
 * active tracing still records their invocations).
 */
import { Tracer } from '@aws-lambda-powertools/tracer';
import { observedServiceName } from './observability';

/** A tracer for this function (tracing is on only inside Lambda). */
export function createTracer(): Tracer {
  return new Tracer({ serviceName: observedServiceName() });
}
