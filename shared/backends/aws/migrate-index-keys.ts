/**
 * The one-off backfill of the index keys (docs/concepts/job-table.md): jobs and batches
 * written before `byStatusShard`/`byBatchKeys` (ca6343b) lack those indexes' key attributes, so no
 * listing finds them. This scans the table (in parallel segments, paged) and, for each job (`SK=JOB`)
 * or batch (`SK=META`) item whose index attributes differ from what the stores write today
 * (`jobIndexAttributes`, `batchIndexAttributes`: the same functions, not a copy), sets only those
 * attributes with an UpdateItem conditioned on the item's version being the one read. A worker's
 * commit in between wins: the update is skipped and counted, and a second run picks the item up
 * (the commit itself writes the keys). Running it again changes nothing.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, paginateScan, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../../engine/batch-store';
import { errorMessage } from '../../errors/error-message';
import { batchIndexAttributes } from './dynamodb-batch-store';
import { jobFromItem, jobIndexAttributes } from './dynamodb-job-store';
import { CorruptRecordError } from './errors';

export interface MigrateIndexKeysOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Count what would change, write nothing. */
  dryRun?: boolean | undefined;
  /** Parallel scan segments (default 4). */
  segments?: number | undefined;
}

export interface MigrateIndexKeysResult {
  /** Job and batch items read. */
  scanned: number;
  /** Items given their index attributes (with dryRun: that would be). */
  updated: number;
  /** Items that already had them. */
  alreadyFine: number;
  /** Items changed by someone else between the read and the update (left; a re-run takes them). */
  skippedByConflict: number;
  /** Items whose record could not be read (named in `problems`), left as they are. */
  unreadable: number;
  problems: string[];
}

type Item = Record<string, unknown>;

function isConditionFailure(error: unknown): boolean {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error as { name?: string }).name === 'ConditionalCheckFailedException'
  );
}

/** The index attributes an item should carry, or undefined when it is neither a job nor a batch. */
function wantedAttributes(item: Item, tableName: string): Record<string, string> | undefined {
  const pk = String(item.PK);
  if (item.SK === 'JOB' && pk.startsWith('JOB#')) return jobIndexAttributes(jobFromItem(item, tableName));
  if (item.SK === 'META' && pk.startsWith('BATCH#')) {
    let batch: Batch;
    try {
      batch = JSON.parse(String(item.body)) as Batch;
    } catch (error) {
      throw new CorruptRecordError(`item ${pk} of table ${tableName} holds a batch that is not JSON`, {
        cause: error,
      });
    }
    if (
      typeof batch?.id !== 'string' ||
      typeof batch.tenant !== 'string' ||
      typeof batch.createdAt !== 'number'
    )
      throw new CorruptRecordError(`item ${pk} of table ${tableName} is not a batch record`);
    return batchIndexAttributes(batch);
  }
  return undefined;
}

export async function migrateIndexKeys(options: MigrateIndexKeysOptions): Promise<MigrateIndexKeysResult> {
  const { client, tableName } = options;
  const segments = Math.max(1, Math.min(64, Math.floor(options.segments ?? 4)));
  const result: MigrateIndexKeysResult = {
    scanned: 0,
    updated: 0,
    alreadyFine: 0,
    skippedByConflict: 0,
    unreadable: 0,
    problems: [],
  };

  const fix = async (item: Item) => {
    let wanted: Record<string, string> | undefined;
    try {
      wanted = wantedAttributes(item, tableName);
    } catch (error) {
      result.scanned += 1;
      result.unreadable += 1;
      result.problems.push(errorMessage(error));
      return;
    }
    if (!wanted) return;
    result.scanned += 1;
    const missing = Object.entries(wanted).filter(([name, value]) => item[name] !== value);
    if (missing.length === 0) {
      result.alreadyFine += 1;
      return;
    }
    if (options.dryRun) {
      result.updated += 1;
      return;
    }
    const names: Record<string, string> = { '#version': 'version' };
    const values: Record<string, unknown> = {};
    const sets = missing.map(([name, value], index) => {
      names[`#a${index}`] = name;
      values[`:a${index}`] = value;
      return `#a${index} = :a${index}`;
    });
    // The version as read: a commit since then raised it, and wins.
    let condition: string;
    if (typeof item.version === 'number') {
      condition = '#version = :version';
      values[':version'] = item.version;
    } else {
      const record = item.SK === 'JOB' ? 'job' : 'body';
      condition = 'attribute_exists(PK) AND attribute_not_exists(#version) AND #record = :record';
      names['#record'] = record;
      values[':record'] = item[record];
    }
    try {
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { PK: item.PK, SK: item.SK },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      result.updated += 1;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      result.skippedByConflict += 1;
    }
  };

  const scanSegment = async (segment: number) => {
    const pages = paginateScan(
      { client },
      {
        TableName: tableName,
        Segment: segment,
        TotalSegments: segments,
        FilterExpression: 'SK = :job OR SK = :meta',
        ExpressionAttributeValues: { ':job': 'JOB', ':meta': 'META' },
        ConsistentRead: true,
      },
    );
    for await (const page of pages) for (const item of page.Items ?? []) await fix(item);
  };

  await Promise.all(Array.from({ length: segments }, (_, segment) => scanSegment(segment)));
  return result;
}
