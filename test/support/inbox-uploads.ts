/**
 * Uploads under `inbox/` in an e2e world with `inbox` (test/e2e/aws/harness/aws-world.ts), and the
 * delivery loop that runs what they start: S3's notification invokes the bundled ingest function
 * (asynchronously, as the template sets it), the step workers take the work queue, the sweeper runs
 * every simulated minute (it wakes the ingest function for a batch whose jobs run), and the clock
 * jumps to whatever is due next when nothing is.
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDbBatchStore } from '../../shared/backends/aws';
import type { Batch } from '../../shared/engine/batch-store';
import type { AwsWorld } from '../e2e/aws/harness/aws-world';

export interface InboxUploads {
  /** S3 through the notification proxy (a browser's presigned PUT goes there too). */
  s3: S3Client;
  batches: DynamoDbBatchStore;
  /** Uploads one object; S3's notification queues the ingest function's invocation. Its ETag. */
  upload(
    key: string,
    body: string | Uint8Array,
    metadata?: Record<string, string>,
  ): Promise<string | undefined>;
  /** Delivers everything, the clock moving to what is due next, until `done`. */
  deliverUntil(done: () => Promise<boolean>, what: string, maxRounds?: number): Promise<void>;
  /** Delivers until the batch is settled and nothing of the ingest function waits. */
  settleBatch(batchId: string): Promise<Batch>;
}

export function inboxUploads(world: AwsWorld): InboxUploads {
  const inbox = world.inbox;
  if (!inbox) throw new Error('start the world with { inbox: true }');
  const env = world.emulators.environment();
  const s3 = new S3Client({
    region: world.emulators.region,
    endpoint: inbox.proxy.url,
    forcePathStyle: true,
    credentials: {
      accessKeyId: env.AWS_ACCESS_KEY_ID ?? 'test',
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? 'test',
    },
  });
  const batches = new DynamoDbBatchStore({
    client: world.emulators.clients.documents,
    tableName: world.env.OPFLOW_TABLE_NAME!,
  });
  let nextSweepAt = Date.now() + 60_000;

  const deliverUntil = async (done: () => Promise<boolean>, what: string, maxRounds = 20_000) => {
    for (let round = 0; round < maxRounds; round++) {
      if (await done()) return;
      if (Date.now() >= nextSweepAt) {
        await world.sweep();
        nextSweepAt = Date.now() + 60_000;
        continue;
      }
      if ((await inbox.invoker.runDue()) > 0) continue;
      const work = world.queueState();
      if (work.ready > 0) {
        await world.deliverOnce();
        continue;
      }
      world.advanceTo(Math.min(inbox.invoker.nextAt(), work.nextAt, nextSweepAt));
    }
    throw new Error(`${what} did not settle in ${maxRounds} rounds`);
  };

  return {
    s3,
    batches,
    async upload(key, body, metadata) {
      const answer = await s3.send(
        new PutObjectCommand({ Bucket: world.bucket, Key: key, Body: body, Metadata: metadata }),
      );
      return answer.ETag?.replace(/"/g, '');
    },
    deliverUntil,
    async settleBatch(batchId) {
      let settled: Batch | undefined;
      await deliverUntil(async () => {
        const batch = await batches.get(batchId);
        if (
          batch &&
          (batch.status === 'FINISHED' || batch.status === 'STOPPED') &&
          batch.inFlight.length === 0 &&
          inbox.invoker.waiting === 0
        )
          settled = batch;
        return settled !== undefined;
      }, `batch ${batchId}`);
      return settled as Batch;
    },
  };
}
