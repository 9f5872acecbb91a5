/**
 * What the api and step-worker Lambda functions build once per instance, at module load: Powertools,
 * the SDK clients, the Open Platform client (its calls counted as metrics) and the engine's
 * dependencies, all from the environment the stack sets (see ../aws/pipeline.ts). A configuration
 * problem fails the function's start with one message naming every wrong variable.
 */
import type { EngineDeps } from '../../engine/deps';
import type { WorkflowRegistry } from '../../engine/workflow';
import { workflows as allWorkflows } from '../../workflows';
import { type AwsPipeline, buildAwsPipeline } from '../aws/pipeline';
import { compressPolling, sandboxSpeedOf } from '../local/sandbox-speed';
import { createObservability, type Observability, usageMetrics } from './observability';

export interface LambdaRuntime {
  deps: EngineDeps;
  observability: Observability;
  pipeline: AwsPipeline;
  /**
   * Runs one invocation and then waits for what it started in the background (the job history's
   * writes): a frozen instance would drop them.
   */
  settle<T>(work: Promise<T>): Promise<T>;
}

/** The runtime of one Lambda instance: call once, at module scope. */
export function createLambdaRuntime(
  options: { env?: Readonly<Record<string, string | undefined>>; workflows?: WorkflowRegistry } = {},
): LambdaRuntime {
  const observability = createObservability();
  const { metrics } = observability;
  const env = options.env ?? process.env;
  const pipeline = buildAwsPipeline({
    env,
    // Against a local sandbox sped up (npm run aws-local), polls shrink by the same factor, as locally.
    workflows: compressPolling(options.workflows ?? allWorkflows, sandboxSpeedOf(env)),
    onUsage: usageMetrics(metrics),
  });
  return {
    deps: pipeline.deps,
    observability,
    pipeline,
    settle: (work) =>
      work.finally(() => Promise.all([pipeline.history.flush(), pipeline.callbackNotifier.flush()])),
  };
}
