/**
 * The answers `opflow --backend aws doctor` reads of the account a stack runs in (decided on in
 * account-checks.ts): the alarm topic's subscriptions (SNS ListSubscriptionsByTopic), and from
 * Lambda the account's concurrency (GetAccountSettings) and, per function, its reserved concurrency
 * (GetFunctionConcurrency), its recursion setting (GetFunctionRecursionConfig) and its SQS event
 * sources' caps (ListEventSourceMappings). The Lambda reads are four GET requests of Lambda's REST
 * API, signed with SigV4 (@smithy/signature-v4) with the credentials the other clients resolve.
 */
import { createHash, createHmac } from 'node:crypto';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, Checksum, SourceData } from '@smithy/types';
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

/** SHA-256 and HMAC-SHA-256 from node:crypto, in the shape the signer takes. */
class NodeSha256 implements Checksum {
  private hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.start();
  }
  private start() {
    return this.secret === undefined
      ? createHash('sha256')
      : createHmac(
          'sha256',
          typeof this.secret === 'string' ? this.secret : Buffer.from(this.secret as Uint8Array),
        );
  }
  update(data: Uint8Array | string): void {
    this.hash.update(typeof data === 'string' ? data : Buffer.from(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.start();
  }
}

/** Reads of Lambda's REST API, signed. */
export class LambdaReads {
  private readonly signer: SignatureV4;
  private readonly host: string;

  constructor(
    region: string,
    credentials: AwsCredentialIdentity | (() => Promise<AwsCredentialIdentity>),
    endpoint = `https://lambda.${region}.amazonaws.com`,
  ) {
    this.signer = new SignatureV4({ service: 'lambda', region, credentials, sha256: NodeSha256 });
    this.host = new URL(endpoint).host;
  }

  private async get<T>(path: string, query: Record<string, string> = {}): Promise<T> {
    const signed = await this.signer.sign({
      method: 'GET',
      protocol: 'https:',
      hostname: this.host,
      path,
      query,
      headers: { host: this.host },
    });
    const search = new URLSearchParams(query).toString();
    const response = await fetch(`https://${this.host}${path}${search ? `?${search}` : ''}`, {
      headers: signed.headers as Record<string, string>,
      signal: AbortSignal.timeout(15_000),
    });
    const body = (await response.json().catch(() => ({}))) as T & { message?: string; Message?: string };
    if (!response.ok)
      throw new Error(
        `Lambda ${path}: ${response.status} ${body.message ?? body.Message ?? response.statusText}`,
      );
    return body;
  }

  async account(): Promise<AccountConcurrency> {
    const answer = await this.get<{
      AccountLimit?: { ConcurrentExecutions?: number; UnreservedConcurrentExecutions?: number };
    }>('/2016-08-19/account-settings');
    return {
      limit: answer.AccountLimit?.ConcurrentExecutions ?? 0,
      unreserved: answer.AccountLimit?.UnreservedConcurrentExecutions ?? 0,
    };
  }

  async function(role: string, name: string): Promise<FunctionFacts> {
    const encoded = encodeURIComponent(name);
    const [concurrency, recursion, mappings] = await Promise.all([
      this.get<{ ReservedConcurrentExecutions?: number }>(`/2019-09-30/functions/${encoded}/concurrency`),
      this.get<{ RecursiveLoop?: string }>(`/2024-08-31/functions/${encoded}/recursion-config`),
      this.get<{ EventSourceMappings?: { ScalingConfig?: { MaximumConcurrency?: number } }[] }>(
        '/2015-03-31/event-source-mappings/',
        { FunctionName: name },
      ),
    ]);
    return {
      role,
      name,
      reserved: concurrency.ReservedConcurrentExecutions,
      recursiveLoop: recursion.RecursiveLoop,
      eventSourceCaps: (mappings.EventSourceMappings ?? []).map((m) => m.ScalingConfig?.MaximumConcurrency),
    };
  }
}
