/**
 * The S3 report store, loaded on first use: its module, `@aws-sdk/client-s3`, `lib-storage` and the
 * presigner are imported (`await import`, a chunk of its own in a Lambda bundle) and the S3 client
 * built when a report, an offloaded input or a link is first asked for. The api and schedules
 * functions build this instead of an S3ReportStore: most of their invocations (list, read, answer
 * or cancel a job; a schedule's slot with a small input) touch no S3 object, and the S3 client was
 * about 100 KiB of their cold start (docs/concepts/lambda-bundles.md, "Code splitting"). The step worker, ingest and
 * the callback sender use S3 in every invocation and keep an S3ReportStore.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { ReportStore } from '../../engine/ports';
import type { AwsClientConfig } from './clients';
import { AwsConfigError } from './errors';
import type { S3ReportStoreOptions } from './s3-report-store';

export interface S3ReportStoreOnFirstUseOptions extends Omit<S3ReportStoreOptions, 'client'> {
  /** The S3 client's settings: it is built on first use. */
  clientConfig: AwsClientConfig;
  /** An S3 client to use instead (one the function builds anyway); else one is built from `clientConfig`. */
  client?: S3Client | undefined;
}

export function s3ReportStoreOnFirstUse(options: S3ReportStoreOnFirstUseOptions): ReportStore {
  // Checked now, as S3ReportStore's constructor does: a misconfigured function fails at its start.
  if (!options.bucket) throw new AwsConfigError('S3ReportStore needs a bucket name');
  let loading: Promise<Required<Pick<ReportStore, 'putStream'>> & ReportStore> | undefined;
  const store = () => {
    if (loading === undefined) {
      loading = (async () => {
        const [{ S3ReportStore }, { createS3Client }] = await Promise.all([
          import('./s3-report-store'),
          import('./s3-client'),
        ]);
        const { clientConfig, client, ...settings } = options;
        return new S3ReportStore({ ...settings, client: client ?? createS3Client(clientConfig) });
      })();
      // A failed load (a chunk that cannot be read) is tried again by the next call, not kept.
      loading.catch(() => {
        loading = undefined;
      });
    }
    return loading;
  };
  return {
    put: async (key, body, contentType) => (await store()).put(key, body, contentType),
    putStream: async (key, body, contentType) => (await store()).putStream(key, body, contentType),
    get: async (key) => (await store()).get(key),
    list: async (prefix) => (await store()).list(prefix),
    link: async (key, ttlSeconds) => (await store()).link(key, ttlSeconds),
  };
}
