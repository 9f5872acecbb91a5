/**
 * The aws backend as the opflow command opens it: the pipeline (pipeline.ts) and what only a person
 * at a terminal asks of the cloud, `opflow doctor`'s checks, the job API's client and the work queue's
 * counts, loaded when asked. No Lambda function
 * imports this module, so none bundles the checks or the Lambda and SNS clients they use.
 */
import type { Backend } from '../backend';
import { loadJobApiSettings } from './config';
import { type AwsPipeline, type AwsPipelineOptions, createAwsPipeline } from './pipeline';

/** The aws pipeline with everything a Backend has, `opflow doctor`'s checks included. */
export type AwsCliBackend = AwsPipeline & Backend;

/** {@link createAwsPipeline} with `work.checks()`, `work.jobApi()` and `work.queue`; throws the same ConfigError on a wrong setting. */
export async function openAwsCliBackend(options: AwsPipelineOptions): Promise<AwsCliBackend> {
  const pipeline = await createAwsPipeline(options);
  const env = options.env ?? process.env;
  return {
    ...pipeline,
    work: {
      ...pipeline.work,
      checks: async () =>
        (await import('./doctor-checks')).awsDoctorChecks(pipeline.aws.clients, pipeline.config, env),
      jobApi: async () => {
        const settings = loadJobApiSettings(env);
        if (settings === undefined) return undefined;
        const { createJobApiClient } = await import('../../job-api-client');
        // An execute-api URL names its region; another (a proxy, aws-local) signs in the stack's.
        const region =
          /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com/.exec(settings.url)?.[1] ?? pipeline.config.region;
        const client = createJobApiClient({
          baseUrl: settings.url,
          ...(settings.token !== undefined
            ? { token: settings.token }
            : { sigv4: { region, credentials: pipeline.aws.clients.dynamoDb.config.credentials } }),
        });
        return { client, url: settings.url };
      },
      queue: {
        url: pipeline.config.queueUrl,
        counts: async () =>
          (await import('../../backends/aws/stack-checks')).workQueueCounts(
            pipeline.aws.clients,
            pipeline.config.queueUrl,
          ),
      },
    },
  };
}
