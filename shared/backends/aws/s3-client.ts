/**
 * The S3 client of the AWS backend (clients.ts's other builders are beside it there), in a file of
 * its own so that importing clients.ts does not make the S3 SDK reachable from a function's entry:
 * the api and schedules functions import it only from the chunk that a report's first read or
 * write loads (s3-report-store-on-first-use.ts).
 */
import { S3Client } from '@aws-sdk/client-s3';
import { type AwsClientConfig, type Instrument, onFirstUse, settingsFor, unseen } from './clients';

/** With an endpoint set (emulators), S3 uses path-style URLs. */
export function createS3Client(config: AwsClientConfig, instrument: Instrument = unseen): S3Client {
  const settings = settingsFor(config, 's3');
  return onFirstUse(S3Client.prototype, () =>
    instrument(new S3Client({ ...settings, forcePathStyle: 'endpoint' in settings })),
  );
}
