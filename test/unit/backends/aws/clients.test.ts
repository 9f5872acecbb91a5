/**
 * The SDK clients of the AWS backend are built on first use (clients.ts `onFirstUse`): nothing is
 * built until a property is read, the stand-in is the real client to every caller (instanceof,
 * bound methods, middleware stack, presigning), and destroying a client never built builds nothing.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../../../shared/backends/aws/aws-clients';
import { createDynamoDbClients, onFirstUse } from '../../../../shared/backends/aws/clients';
import { createS3Client } from '../../../../shared/backends/aws/s3-client';
import { SecretsManagerCallbackSecrets } from '../../../../shared/backends/aws/secrets-manager-callback-secrets';
import { SecretsManagerKeySource } from '../../../../shared/backends/aws/secrets-manager-key-source';
import { SecretsManagerWebhookSecrets } from '../../../../shared/backends/aws/secrets-manager-webhook-secrets';

const config = {
  region: 'eu-west-1',
  endpoint: 'http://127.0.0.1:9',
  credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
};

class Counter {
  count = 0;
  add(by: number) {
    this.count += by;
    return this.count;
  }
}

describe('onFirstUse', () => {
  it('builds nothing until a property is read, then builds once and forwards to it', () => {
    let built = 0;
    const counter = onFirstUse(Counter.prototype, () => {
      built++;
      return new Counter();
    });
    expect(built).toBe(0);
    expect(counter).toBeInstanceOf(Counter);
    expect(built).toBe(0);
    const add = counter.add; // detached: bound to the real instance
    expect(add(2)).toBe(2);
    expect(counter.add(3)).toBe(5);
    counter.count = 10;
    expect(counter.count).toBe(10);
    expect('add' in counter).toBe(true);
    expect(built).toBe(1);
  });

  it('destroys nothing it never built', () => {
    let built = 0;
    const client = onFirstUse(S3Client.prototype, () => {
      built++;
      return new S3Client(config);
    });
    client.destroy();
    expect(built).toBe(0);
  });
});

describe('the lazily built SDK clients', () => {
  it('are the SDK classes, instrumented once on first use', () => {
    const seen: unknown[] = [];
    const instrument = <T>(client: T) => {
      seen.push(client);
      return client;
    };
    const { dynamoDb, documents } = createDynamoDbClients(config, instrument);
    const s3 = createS3Client(config, instrument);
    expect(seen).toHaveLength(0);
    expect(dynamoDb).toBeInstanceOf(DynamoDBClient);
    expect(documents).toBeInstanceOf(DynamoDBDocumentClient);
    expect(s3).toBeInstanceOf(S3Client);
    // The document client reads the DynamoDB client's config and middleware stack: both get built.
    expect(typeof documents.send).toBe('function');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(DynamoDBClient);
    expect(documents.middlewareStack).toBe(dynamoDb.middlewareStack);
    expect(seen).toHaveLength(1);
  });

  it('presign like an S3 client built at once, with the path-style URL of an endpoint', async () => {
    const lazy = createS3Client(config);
    const eager = new S3Client({ ...config, forcePathStyle: true });
    const command = () => new GetObjectCommand({ Bucket: 'reports', Key: 'reports/J1/report.html' });
    const signedAt = new Date('2026-11-23T19:00:00Z');
    const [fromLazy, fromEager] = await Promise.all([
      getSignedUrl(lazy, command(), { expiresIn: 60, signingDate: signedAt }),
      getSignedUrl(eager, command(), { expiresIn: 60, signingDate: signedAt }),
    ]);
    expect(fromLazy).toMatch(/^http:\/\/127\.0\.0\.1:9\/reports\/reports\/J1\/report\.html\?/);
    expect(fromLazy).toBe(fromEager);
    eager.destroy();
    lazy.destroy();
  });

  it('are destroyed whether built or not', () => {
    const clients = createAwsClients(config);
    expect(clients.sqs).toBeInstanceOf(SQSClient);
    void clients.sqs.config; // built
    expect(() => destroyAwsClients(clients)).not.toThrow();
  });
});

describe("the secrets' readers (Powertools' SecretsProvider)", () => {
  it('build no Secrets Manager client until a secret is read, then one', async () => {
    let built = 0;
    const client = onFirstUse(SecretsManagerClient.prototype, () => {
      built++;
      const real = new SecretsManagerClient(config);
      // The secret's answer without a network: what GetSecretValue returns.
      real.send = (async () => ({ SecretString: '{"apiKey":"key-of-acme"}' })) as never;
      return real;
    });
    const keys = new SecretsManagerKeySource({ client, prefix: 'opflow/api-key/' });
    const webhooks = new SecretsManagerWebhookSecrets(client, 'opflow/webhook/');
    const callbacks = new SecretsManagerCallbackSecrets(client, 'opflow/callback/');
    // What a Lambda instance builds at its start: nothing of the client yet.
    expect(built).toBe(0);
    expect(await keys.getKey('acme')).toBe('key-of-acme');
    expect(built).toBe(1);
    expect(await webhooks.get('github')).toBeDefined();
    expect(await callbacks.secretFor('acme')).toBeDefined();
    expect(built).toBe(1);
  });
});
