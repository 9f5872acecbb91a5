/**
 * Asynchronous invocations of an opflow function (`InvocationType: Event`): how the ingest function
 * hands its work on to a new invocation and how the sweeper wakes it. Lambda queues the event and
 * answers 202 at once; it retries a failed invocation as the function's asynchronous settings say.
 * A module of its own, so that only the functions that invoke carry the Lambda client.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { type AwsClientConfig, onFirstUse } from './clients';

/**
 * The Lambda client, built on first use: its endpoint is `AWS_ENDPOINT_URL_LAMBDA` (aws-local and
 * the e2e harness answer there as Lambda's Invoke API does), else the common endpoint, else AWS.
 */
export function createLambdaClient(
  config: AwsClientConfig,
  env: Readonly<Record<string, string | undefined>> = process.env,
): LambdaClient {
  const endpoint = env.AWS_ENDPOINT_URL_LAMBDA?.trim() || config.endpoint;
  return onFirstUse(
    LambdaClient.prototype,
    () =>
      new LambdaClient({
        region: config.region,
        ...(endpoint ? { endpoint } : {}),
        ...(config.credentials ? { credentials: config.credentials } : {}),
      }),
  );
}

/** Queues one asynchronous invocation of `functionName` with `payload`; throws unless Lambda accepted it. */
export async function invokeAsync(
  lambda: LambdaClient,
  functionName: string,
  payload: unknown,
): Promise<void> {
  const answer = await lambda.send(
    new InvokeCommand({
      FunctionName: functionName,
      InvocationType: 'Event',
      Payload: new TextEncoder().encode(JSON.stringify(payload)),
    }),
  );
  if (answer.StatusCode !== 202)
    throw new Error(`Lambda did not accept the invocation of ${functionName} (status ${answer.StatusCode})`);
}
