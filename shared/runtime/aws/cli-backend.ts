/**
 * The aws backend as the opflow command opens it: the pipeline (pipeline.ts) and what only a person
 * at a terminal asks of the cloud, `opflow doctor`'s checks, loaded when asked. No Lambda function
 * imports this module, so none bundles the checks or the Lambda and SNS clients they use.
 */
import type { Backend } from '../backend';
import { type AwsPipeline, type AwsPipelineOptions, createAwsPipeline } from './pipeline';

/** The aws pipeline with everything a Backend has, `opflow doctor`'s checks included. */
export type AwsCliBackend = AwsPipeline & Backend;

/** {@link createAwsPipeline} with `work.checks()`; throws the same ConfigError on a wrong setting. */
export async function openAwsCliBackend(options: AwsPipelineOptions): Promise<AwsCliBackend> {
  const pipeline = await createAwsPipeline(options);
  const env = options.env ?? process.env;
  return {
    ...pipeline,
    work: {
      ...pipeline.work,
      checks: async () =>
        (await import('./doctor-checks')).awsDoctorChecks(pipeline.aws.clients, pipeline.config, env),
    },
  };
}
