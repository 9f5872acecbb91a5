/**
 * The answers `opflow --backend aws doctor` reads of the account a stack runs in (decided on in
 * account-checks.ts): the alarm topic's subscriptions (SNS ListSubscriptionsByTopic), and from
 * Lambda the account's concurrency (GetAccountSettings) and, per function, its reserved concurrency
 * (GetFunctionConcurrency), its recursion setting (GetFunctionRecursionConfig) and its SQS event
 * sources' caps (ListEventSourceMappings, every page), with @aws-sdk/client-lambda.
 */
import {
  GetAccountSettingsCommand,
  GetFunctionConcurrencyCommand,
  GetFunctionRecursionConfigCommand,
  LambdaClient,
  paginateListEventSourceMappings,
} from '@aws-sdk/client-lambda';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { AccountConcurrency, FunctionFacts, TopicSubscription } from './account-checks';
import type { AwsClientConfig } from './clients';

/** Every subscription of the topic (all pages). */
export async function topicSubscriptions(
  config: AwsClientConfig,
  topicArn: string,
): Promise<TopicSubscription[]> {
  const sns = new SNSClient({
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    ...(config.credentials ? { credentials: config.credentials } : {}),
  });
  try {
    const found: TopicSubscription[] = [];
    let token: string | undefined;
    do {
      const page = await sns.send(
        new ListSubscriptionsByTopicCommand({ TopicArn: topicArn, NextToken: token }),
      );
      found.push(...(page.Subscriptions ?? []));
      token = page.NextToken;
    } while (token);
    return found;
  } finally {
    sns.destroy();
  }
}

/** Reads of Lambda's API, with the SDK's client (its default credential chain unless given). */
export class LambdaReads {
  private readonly lambda: LambdaClient;

  constructor(
    region: string,
    credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider,
    endpoint?: string,
  ) {
    this.lambda = new LambdaClient({
      region,
      ...(credentials ? { credentials } : {}),
      ...(endpoint ? { endpoint } : {}),
      requestHandler: { requestTimeout: 15_000 },
    });
  }

  async account(): Promise<AccountConcurrency> {
    const answer = await this.lambda.send(new GetAccountSettingsCommand({}));
    return {
      limit: answer.AccountLimit?.ConcurrentExecutions ?? 0,
      unreserved: answer.AccountLimit?.UnreservedConcurrentExecutions ?? 0,
    };
  }

  async function(role: string, name: string): Promise<FunctionFacts> {
    const mappings = async () => {
      const caps: (number | undefined)[] = [];
      // SQS sources only: a stream source runs one batch per shard at a time, capped by the stream.
      for await (const page of paginateListEventSourceMappings(
        { client: this.lambda },
        { FunctionName: name },
      ))
        caps.push(
          ...(page.EventSourceMappings ?? [])
            .filter((m) => m.EventSourceArn?.includes(':sqs:') ?? true)
            .map((m) => m.ScalingConfig?.MaximumConcurrency),
        );
      return caps;
    };
    const [concurrency, recursion, eventSourceCaps] = await Promise.all([
      this.lambda.send(new GetFunctionConcurrencyCommand({ FunctionName: name })),
      this.lambda.send(new GetFunctionRecursionConfigCommand({ FunctionName: name })),
      mappings(),
    ]);
    return {
      role,
      name,
      reserved: concurrency.ReservedConcurrentExecutions,
      recursiveLoop: recursion.RecursiveLoop,
      eventSourceCaps,
    };
  }

  /** Closes the client's connections. */
  destroy(): void {
    this.lambda.destroy();
  }
}
