/**
 * What `opflow --backend aws doctor` asks of a deployed stack's resources, each answered ok, warn or
 * fail with its fix: the job table answers a read, the work queue and its dead-letter queue answer
 * (messages waiting, messages dead), the report bucket answers, and every tenant's API key secret
 * (`<prefix><tenant>`) holds a key. A secret's value is read to see that it holds one, never shown.
 * Also the work queue's counts a waiting command reads (`work.queue` of the aws backend).
 */
import { HeadBucketCommand } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, ListSecretsCommand } from '@aws-sdk/client-secrets-manager';
import { GetQueueAttributesCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { errorMessage } from '../../errors/error-message';
import type { AwsClients } from './clients';
import { apiKeyFromSecret } from './secrets-manager-key-source';

export interface StackCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  fix?: string | undefined;
}

export interface StackCheckConfig {
  tableName: string;
  queueUrl: string;
  bucketName: string;
  apiKeySecretPrefix: string;
}

const permissionsFix =
  'check the credentials (AWS_PROFILE) and the region, and that the stack is deployed there';

async function check(name: string, probe: () => Promise<StackCheck>): Promise<StackCheck> {
  try {
    return await probe();
  } catch (error) {
    return { name, status: 'fail', detail: errorMessage(error), fix: permissionsFix };
  }
}

export async function stackChecks(clients: AwsClients, config: StackCheckConfig): Promise<StackCheck[]> {
  return [
    await check('job table', async () => {
      await clients.documents.send(
        new GetCommand({ TableName: config.tableName, Key: { PK: 'DOCTOR#probe', SK: 'DOCTOR#probe' } }),
      );
      return { name: 'job table', status: 'ok', detail: `${config.tableName} answers` };
    }),
    await check('work queue', () => queueCheck(clients, config.queueUrl)),
    await check('report bucket', async () => {
      await clients.s3.send(new HeadBucketCommand({ Bucket: config.bucketName }));
      return { name: 'report bucket', status: 'ok', detail: `${config.bucketName} answers` };
    }),
    ...(await tenantSecretChecks(clients, config.apiKeySecretPrefix)),
  ];
}

/**
 * The work queue's messages ready to run and in flight: what a waiting command reads to tell a queue
 * nobody reads (aws-reachability.ts) from a busy one.
 */
export async function workQueueCounts(
  clients: Pick<AwsClients, 'sqs'>,
  queueUrl: string,
): Promise<{ waiting: number; inFlight: number }> {
  const { Attributes = {} } = await clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    waiting: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

async function queueCheck(clients: AwsClients, queueUrl: string): Promise<StackCheck> {
  const { Attributes = {} } = await clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'RedrivePolicy'],
    }),
  );
  const waiting = Number(Attributes.ApproximateNumberOfMessages ?? 0);
  const deadArn = Attributes.RedrivePolicy
    ? (JSON.parse(Attributes.RedrivePolicy) as { deadLetterTargetArn?: string }).deadLetterTargetArn
    : undefined;
  if (!deadArn)
    return {
      name: 'work queue',
      status: 'warn',
      detail: `${waiting} messages waiting; the queue has no dead-letter queue`,
      fix: 'deploy the stack again: its work queue sends failed messages to a dead-letter queue',
    };
  const deadName = deadArn.split(':').pop() ?? '';
  const { QueueUrl: deadUrl } = await clients.sqs.send(new GetQueueUrlCommand({ QueueName: deadName }));
  const dead = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: deadUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  const deadCount = Number(dead.Attributes?.ApproximateNumberOfMessages ?? 0);
  const detail = `${waiting} messages waiting, ${deadCount} in the dead-letter queue ${deadName}`;
  return deadCount > 0
    ? {
        name: 'work queue',
        status: 'warn',
        detail,
        fix: 'messages in the dead-letter queue are steps that failed 5 times: read them, fix the cause, then redrive them (the sweeper restarts their jobs meanwhile)',
      }
    : { name: 'work queue', status: 'ok', detail };
}

/** Every secret under the prefix (a tenant each), and whether it holds a key. */
async function tenantSecretChecks(clients: AwsClients, prefix: string): Promise<StackCheck[]> {
  const names: string[] = [];
  let token: string | undefined;
  do {
    const page = await clients.secretsManager.send(
      new ListSecretsCommand({ Filters: [{ Key: 'name', Values: [prefix] }], NextToken: token }),
    );
    for (const secret of page.SecretList ?? []) if (secret.Name?.startsWith(prefix)) names.push(secret.Name);
    token = page.NextToken;
  } while (token);
  if (names.length === 0)
    return [
      {
        name: 'tenant secrets',
        status: 'fail',
        detail: `no secret is named ${prefix}<tenant>`,
        fix: 'deploy the stack (it creates one secret per tenant of its settings)',
      },
    ];
  const checks: StackCheck[] = [];
  for (const name of names.sort()) {
    const tenant = name.slice(prefix.length);
    checks.push(
      await check(`tenant ${tenant}`, async () => {
        const answer = await clients.secretsManager
          .send(new GetSecretValueCommand({ SecretId: name }))
          .catch((error: unknown) => {
            if ((error as { name?: string }).name === 'ResourceNotFoundException')
              return { SecretString: '' };
            throw error;
          });
        const key = apiKeyFromSecret(name, answer.SecretString ?? '');
        return key
          ? { name: `tenant ${tenant}`, status: 'ok', detail: `secret ${name} holds a key` }
          : {
              name: `tenant ${tenant}`,
              status: 'fail',
              detail: `secret ${name} holds no key: this tenant's jobs fail at their first call`,
              fix: `aws secretsmanager put-secret-value --secret-id ${name} --secret-string '{"apiKey":"<your key>"}'`,
            };
      }),
    );
  }
  return checks;
}
