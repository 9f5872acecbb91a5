// The callback outbox contract on DynamoDB Local, and one delivery by the aws sender wiring: the
// DynamoDB outbox and job store, the tenant's signing secret from the Secrets Manager emulator.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsEmulators, startAwsEmulators } from '../../scripts/emulators/aws-emulators';
import { DynamoDbJobStore, S3ReportStore } from '../../shared/backends/aws';
import { DynamoDbCallbackOutbox } from '../../shared/backends/aws/dynamodb-callback-outbox';
import { SecretsManagerCallbackSecrets } from '../../shared/backends/aws/secrets-manager-callback-secrets';
import { presignedReportLinks, runCallbackSender } from '../../shared/callbacks/sender';
import { makeJob, T0 } from '../support/factories';
import { describeCallbackOutboxContract } from './callback-outbox.contract';

let emulators: AwsEmulators;
beforeAll(async () => {
  emulators = await startAwsEmulators();
});
afterAll(async () => {
  await emulators?.stop();
});

describeCallbackOutboxContract('DynamoDbCallbackOutbox', async () => {
  const tableName = await emulators.createTable();
  return new DynamoDbCallbackOutbox(emulators.clients.documents, tableName);
});

describe('callback sender on the aws backend', () => {
  it('delivers a job’s callback signed with the tenant’s Secrets Manager secret', async () => {
    const tableName = await emulators.createTable();
    const reports = new S3ReportStore({ client: emulators.clients.s3, bucket: emulators.createBucket() });
    const store = new DynamoDbJobStore({ client: emulators.clients.documents, tableName, reports });
    const outbox = new DynamoDbCallbackOutbox(emulators.clients.documents, tableName);
    // Secrets Manager generates a password, not a whsec_ secret: its text is the key's bytes.
    emulators.secretsManager!.setSecret(
      'opflow-test/callback-signing/acme',
      'Generated64CharacterPasswordWithoutPunctuation0123456789abcdefgh',
    );
    const secrets = new SecretsManagerCallbackSecrets(
      emulators.clients.secretsManager,
      'opflow-test/callback-signing/',
    );

    const bodies: { headers: Record<string, string>; body: string }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({
          headers: req.headers as Record<string, string>,
          body: Buffer.concat(chunks).toString(),
        });
        res.writeHead(200).end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    try {
      const job = makeJob({
        tenant: 'acme',
        status: 'SUCCEEDED',
        finishedAt: T0,
        callbackUrl: `http://127.0.0.1:${port}/cb`,
        id: '01JCALLBACKLINKS0000000001',
        outputs: ['reports/01JCALLBACKLINKS0000000001/report.md'],
      });
      await store.create(job);
      await outbox.add(job.id, T0);
      const result = await runCallbackSender({
        store,
        outbox,
        secrets,
        reportLinks: presignedReportLinks(reports, 3600),
        clock: { now: () => T0 },
        send: { policy: { allowHosts: [`127.0.0.1:${port}`] } },
      });
      expect(result).toMatchObject({ attempted: 1, delivered: 1 });
      const [got] = bodies;
      const receiverSecret = `whsec_${Buffer.from('Generated64CharacterPasswordWithoutPunctuation0123456789abcdefgh').toString('base64')}`;
      const expected = new Webhook(receiverSecret).sign(got!.headers['webhook-id']!, new Date(T0), got!.body);
      expect(got!.headers['webhook-signature']).toBe(expected);
      // The report's files as presigned S3 links, never a path of the sender's machine.
      const files = JSON.parse(got!.body).data.report.files as { name: string; url: string }[];
      expect(files).toHaveLength(1);
      expect(files[0]?.name).toBe('report.md');
      expect(files[0]?.url).toMatch(/^https?:\/\/.*X-Amz-Signature=/);
      expect((await store.get(job.id))?.callback?.state).toBe('delivered');
      expect(await outbox.due(T0 + 86_400_000, 10)).toEqual([]);
    } finally {
      server.close();
    }
  });
});
