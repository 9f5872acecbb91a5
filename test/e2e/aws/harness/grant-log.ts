// The rate limiter's grant log on aws: every version of a key's bucket item on the job table's
// stream, read back for the tests and benches that count in tokens (priority, fair shares).
import type { DynamoDBRecord } from 'aws-lambda';
import { DynamoDbStreamSource } from '../../../../scripts/lambda/dynamodb-stream-source';
import { grantsOfStream } from '../../../../shared/backends/aws/dynamodb-rate-grants';
import type { TokenGrant } from '../../../../shared/engine/admission/priority-lane';
import type { AwsWorld } from './aws-world';

/** Each key's grant log (by its bucket item's key), in grant order, from the stream so far. */
export async function grantLogsOf(world: AwsWorld): Promise<Map<string, TokenGrant[]>> {
  const stream = new DynamoDbStreamSource({
    endpoint: world.emulators.dynamoDb!.endpoint,
    region: world.emulators.region,
    credentials: { accessKeyId: 'test' },
    tableName: world.env.OPFLOW_TABLE_NAME as string,
    filters: [{ dynamodb: { Keys: { PK: { S: [{ prefix: 'RATE#' }] } } } }],
  });
  await stream.start();
  const records: DynamoDBRecord[] = [];
  await stream.drain(async (event) => {
    records.push(...event.Records);
    return undefined;
  });
  return grantsOfStream(records);
}
