/**
 * The BatchStore of an opened pipeline: the batches table of the local database, or the job table's
 * BATCH# items on AWS.
 */
import type { BatchStore } from '../engine/batch-store';
import type { AwsPipeline } from './aws/pipeline';
import type { LocalPipeline } from './local/pipeline';
import type { Pipeline } from './pipeline';

export async function batchStoreOf(pipeline: Pipeline): Promise<BatchStore> {
  if (pipeline.backend === 'local') return (pipeline as LocalPipeline).local.batches;
  const aws = pipeline as AwsPipeline;
  const { DynamoDbBatchStore } = await import('../backends/aws');
  return new DynamoDbBatchStore({ client: aws.aws.clients.documents, tableName: aws.config.tableName });
}
