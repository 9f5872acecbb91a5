/**
 * New jobs' first messages on aws, holding their first call's token (engine/first-message.ts): the
 * key's bucket item in the job table, and the tenant's bucket as the step worker recorded it
 * (`KEYOF#` items, dynamodb-key-buckets.ts). Only the api's handler wires it in: the admission code
 * it holds (about 12 KiB) stays out of the other functions' cold starts.
 */
import { DynamoDbKeyBuckets } from '../../backends/aws/dynamodb-key-buckets';
import { DynamoDbRateLimiter } from '../../backends/aws/dynamodb-rate-limiter';
import { type FirstMessageSender, firstMessageSender } from '../../engine/first-message';
import { awsAdmissionSettings } from '../aws/config';
import type { FirstMessageTable } from './jobs-runtime';

export function awsFirstMessages({ client, tableName, config }: FirstMessageTable): FirstMessageSender {
  return firstMessageSender({
    rateLimiter: new DynamoDbRateLimiter({ client, tableName, ratePerSecond: config.qps }),
    buckets: new DynamoDbKeyBuckets({ client, tableName }),
    // Admission's settings as the step workers read them (reserve horizon, on or off).
    ...awsAdmissionSettings(config),
  });
}
