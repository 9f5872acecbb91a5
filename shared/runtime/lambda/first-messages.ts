/**
 * New jobs' first messages on aws, holding their first call's token (engine/first-message.ts): the
 * key's bucket item in the job table, and the tenant's bucket as the step worker recorded it
 * (`KEYOF#` items, dynamodb-key-buckets.ts). Only the api's handler wires it in: the admission code
 * it holds (about 12 KiB) stays out of the other functions' cold starts. The key's fair shares
 * (`OPFLOW_SHARES`, as the step worker has it) are charged in the bucket item's write that takes the
 * token, so a new job's first token counts in its tenant's and batch's share.
 */
import { DynamoDbKeyBuckets } from '../../backends/aws/dynamodb-key-buckets';
import { DynamoDbRateLimiter } from '../../backends/aws/dynamodb-rate-limiter';
import { type FirstMessageSender, firstMessageSender } from '../../engine/first-message';
import { awsAdmissionSettings } from '../aws/config';
import type { FirstMessageTable } from './jobs-runtime';

export function awsFirstMessages({ client, tableName, config, env }: FirstMessageTable): FirstMessageSender {
  return firstMessageSender({
    rateLimiter: new DynamoDbRateLimiter({
      client,
      tableName,
      ratePerSecond: config.qps,
      // The OPFLOW_SHARES text: parsed with the ledger, a chunk loaded at the first token.
      shares: env.OPFLOW_SHARES ?? '',
    }),
    buckets: new DynamoDbKeyBuckets({ client, tableName }),
    // Admission's settings as the step workers read them (reserve horizon, on or off).
    ...awsAdmissionSettings(config),
  });
}
