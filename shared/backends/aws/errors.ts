/**
 * The AWS backend's error family. Each error names what went wrong and where, never a secret
 * value. Callers decide on the class (or `name`), not on message text.
 */

/** Base of every error the AWS adapters raise themselves (SDK errors pass through as `cause`). */
export class AwsBackendError extends Error {
  override name = 'AwsBackendError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A queue message body that is not a `{jobId, version}` work message. */
export class InvalidWorkMessageError extends AwsBackendError {
  override name = 'InvalidWorkMessageError';
}

/**
 * A list cursor that this store did not produce (or produced for another query). A RangeError,
 * like the local store's, so callers can answer "bad cursor" whatever the backend.
 */
export class InvalidCursorError extends RangeError {
  override name = 'InvalidCursorError';
}

/** `create()` for a job id that already exists (without an idempotency key that explains it). */
export class JobAlreadyExistsError extends AwsBackendError {
  override name = 'JobAlreadyExistsError';
  constructor(readonly jobId: string) {
    super(`job ${jobId} already exists`);
  }
}

/** A job record that would not fit in one DynamoDB item even with its input moved to S3. */
export class JobTooLargeError extends AwsBackendError {
  override name = 'JobTooLargeError';
}

/** A stored item or object that does not hold what this backend writes (corrupted or foreign). */
export class CorruptRecordError extends AwsBackendError {
  override name = 'CorruptRecordError';
}

/** Some messages of a batch could not be sent even after retrying them. */
export class WorkQueueSendError extends AwsBackendError {
  override name = 'WorkQueueSendError';
  constructor(
    message: string,
    readonly failed: { jobId: string; version: number; code: string }[],
  ) {
    super(message);
  }
}

/** A secret exists but does not hold an API key in a form we understand. */
export class InvalidSecretError extends AwsBackendError {
  override name = 'InvalidSecretError';
}

/** Configuration that cannot work (missing table name, bad prefix, ...). */
export class AwsConfigError extends AwsBackendError {
  override name = 'AwsConfigError';
}
