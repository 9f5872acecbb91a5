/**
 * Events of the Lambda `ingest` (invoked asynchronously): S3 events of uploads under `inbox/` and
 * the continuations of the function and the sweeper, malformed, with missing fields, oversized or of
 * the wrong types. `{bucket}` in an event is the suite's report bucket. No row may create or change
 * a batch or a job.
 */

/** One invocation's event, what is in the bucket first, and what the function must do with it. */
export interface IngestRow {
  name: string;
  /**
   * The event: a string that parses as JSON is handed over parsed, any other string as a JSON string,
   * anything else as it is; `undefined`: no event at all.
   */
  body: unknown;
  /** Objects put in the bucket first: key to body and metadata. */
  objects?: Record<string, { body: string; metadata?: Record<string, string> }> | undefined;
  /**
   * True when the invocation must fail (Lambda retries it, then the ingest dead-letter queue): a fault
   * that may pass (the store or S3 down). False: an event no retry can help is dropped with a line.
   */
  failed: boolean;
  /** What the log lines must contain: what is wrong and where (the field, key or metadata). */
  logs: (string | RegExp)[];
}

/** An S3 event of one record: `ObjectCreated:Put` of `key` in the suite's bucket, with `overrides`. */
const s3Event = (key: unknown, overrides: Record<string, unknown> = {}) => ({
  Records: [
    {
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      eventName: 'ObjectCreated:Put',
      s3: { bucket: { name: '{bucket}' }, object: { key } },
      ...overrides,
    },
  ],
});
const withS3 = (s3: unknown) => ({ Records: [{ eventName: 'ObjectCreated:Put', s3 }] });
const manifest = `${JSON.stringify({ id: 'a', query: 'TTL:(hinge)' })}\n`;
const notIngest = 'not an ingest event; dropped';

export const ingestRows: IngestRow[] = [
  // Malformed bodies.
  { name: 'a string event', body: 'hello', failed: false, logs: [notIngest, 'not a JSON object'] },
  { name: 'an empty string', body: '', failed: false, logs: [notIngest, 'not a JSON object'] },
  { name: 'no event at all', body: undefined, failed: false, logs: [notIngest, 'not a JSON object'] },
  { name: 'JSON null', body: 'null', failed: false, logs: [notIngest] },
  { name: 'a JSON number', body: '42', failed: false, logs: [notIngest] },
  { name: 'a JSON array', body: '[{"kind":"continue"}]', failed: false, logs: [notIngest] },
  {
    name: 'JSON cut short',
    body: '{"kind": "continue", "batchId"',
    failed: false,
    logs: ['not a JSON object'],
  },
  {
    name: 'invalid UTF-8 (a lone surrogate escape)',
    body: '{"kind":"continue","batchId":"\\ud800"}',
    failed: false,
    logs: [/batchId/],
  },
  // Continuations: unknown fields, wrong types.
  {
    name: 'a continuation with a field it does not have',
    body: { kind: 'continue', batch: 'good' },
    failed: false,
    logs: ['batch'],
  },
  {
    name: 'a continuation whose batchId is a number',
    body: { kind: 'continue', batchId: 5 },
    failed: false,
    logs: ['batchId'],
  },
  {
    name: 'a continuation whose batchId is empty',
    body: { kind: 'continue', batchId: '' },
    failed: false,
    logs: ['batchId'],
  },
  {
    name: 'a continuation whose batchId is too long',
    body: { kind: 'continue', batchId: 'b'.repeat(101) },
    failed: false,
    logs: ['batchId'],
  },
  {
    name: 'a continuation with a negative hop',
    body: { kind: 'continue', batchId: 'good', hop: -1 },
    failed: false,
    logs: ['hop'],
  },
  {
    name: 'a continuation whose hop is a string',
    body: { kind: 'continue', batchId: 'good', hop: '1' },
    failed: false,
    logs: ['hop'],
  },
  { name: 'an unknown kind', body: { kind: 'restart', batchId: 'good' }, failed: false, logs: [notIngest] },
  {
    name: 'a continuation of a batch that does not exist is dropped quietly',
    body: { kind: 'continue', batchId: 'no-such-batch' },
    failed: false,
    logs: [],
  },
  // S3 events: missing fields and wrong types.
  {
    name: 'an S3 event whose Records is not a list',
    body: { Records: 'x' },
    failed: false,
    logs: ['Records'],
  },
  {
    name: 'an S3 record without s3',
    body: { Records: [{ eventName: 'ObjectCreated:Put' }] },
    failed: false,
    logs: ['Records[0].s3'],
  },
  {
    name: 'an S3 record without eventName',
    body: { Records: [{ s3: { bucket: { name: '{bucket}' }, object: { key: 'inbox/x' } } }] },
    failed: false,
    logs: ['Records[0].eventName'],
  },
  {
    name: 'an S3 record without a bucket',
    body: withS3({ object: { key: 'inbox/patent-count/b/m.jsonl' } }),
    failed: false,
    logs: ['Records[0].s3.bucket'],
  },
  {
    name: 'an S3 record with an empty bucket name',
    body: withS3({ bucket: { name: '' }, object: { key: 'inbox/patent-count/b/m.jsonl' } }),
    failed: false,
    logs: ['Records[0].s3.bucket.name'],
  },
  {
    name: 'an S3 record without a key',
    body: withS3({ bucket: { name: '{bucket}' }, object: {} }),
    failed: false,
    logs: ['Records[0].s3.object.key'],
  },
  { name: 'an S3 key that is a number', body: s3Event(5), failed: false, logs: ['Records[0].s3.object.key'] },
  {
    name: 'an S3 key that is not URL-encoded right',
    body: s3Event('inbox/patent-count/b/%E0%A4%A.jsonl'),
    failed: false,
    logs: ['inbox/patent-count/b/%E0%A4%A.jsonl', 'not a URL-encoded S3 key'],
  },
  {
    name: 'an S3 event of another bucket',
    body: {
      Records: [
        {
          eventName: 'ObjectCreated:Put',
          s3: { bucket: { name: 'someone-elses-bucket' }, object: { key: 'inbox/patent-count/b/m.jsonl' } },
        },
      ],
    },
    failed: false,
    logs: ['someone-elses-bucket', 'not the report bucket'],
  },
  {
    name: 'an S3 event of an object that is gone',
    body: s3Event('inbox/patent-count/gone/m.jsonl'),
    failed: false,
    logs: ['inbox/patent-count/gone/m.jsonl', 'no longer in the bucket'],
  },
  {
    name: 'a removal event is left alone',
    body: s3Event('inbox/patent-count/good/m.jsonl', { eventName: 'ObjectRemoved:Delete' }),
    failed: false,
    logs: [],
  },
  // S3 events of uploads the inbox cannot take.
  {
    name: 'an upload outside inbox/',
    objects: { 'elsewhere/m.jsonl': { body: manifest } },
    body: s3Event('elsewhere/m.jsonl'),
    failed: false,
    logs: ['inbox object left alone', 'not under inbox/'],
  },
  {
    name: 'an upload under a tenant prefix that is no tenant name',
    objects: { 'inbox/tenants/a b/patent-count/b/m.jsonl': { body: manifest } },
    body: s3Event('inbox/tenants/a+b/patent-count/b/m.jsonl'),
    failed: false,
    logs: ['"a b" is not a tenant name'],
  },
  {
    name: 'an upload whose opflow-tenant metadata names another tenant',
    objects: { 'inbox/patent-count/t/m.jsonl': { body: manifest, metadata: { 'opflow-tenant': 'acme' } } },
    body: s3Event('inbox/patent-count/t/m.jsonl'),
    failed: false,
    logs: ['opflow-tenant metadata "acme"'],
  },
  {
    name: 'an upload naming an unknown workflow',
    objects: { 'inbox/no-such-flow/b/m.jsonl': { body: manifest } },
    body: s3Event('inbox/no-such-flow/b/m.jsonl'),
    failed: false,
    logs: ['unknown workflow', 'no-such-flow'],
  },
  {
    name: 'opflow-options metadata that is not JSON',
    objects: { 'inbox/patent-count/o1/m.jsonl': { body: manifest, metadata: { 'opflow-options': '{' } } },
    body: s3Event('inbox/patent-count/o1/m.jsonl'),
    failed: false,
    logs: ['inbox/patent-count/o1/m.jsonl', 'opflow-options metadata is not JSON'],
  },
  {
    name: 'opflow-options metadata of the wrong types',
    objects: {
      'inbox/patent-count/o2/m.jsonl': {
        body: manifest,
        metadata: { 'opflow-options': JSON.stringify({ inFlight: 'many', selection: 'ask' }) },
      },
    },
    body: s3Event('inbox/patent-count/o2/m.jsonl'),
    failed: false,
    logs: ['opflow-options metadata', 'inFlight', 'selection'],
  },
  {
    name: 'an opflow-batch metadata that is no batch name',
    objects: {
      'inbox/patent-count/o3/m.jsonl': { body: manifest, metadata: { 'opflow-batch': '../../x' } },
    },
    body: s3Event('inbox/patent-count/o3/m.jsonl'),
    failed: false,
    logs: ['opflow-batch', '../../x'],
  },
  // Oversized.
  {
    name: 'an oversized body (300 KB of JSON) is dropped, and not logged whole',
    body: JSON.stringify({ kind: 'restart', pad: 'x'.repeat(300 * 1024) }),
    failed: false,
    logs: [notIngest],
  },
  {
    name: 'an S3 event of 200 records of objects that are gone',
    body: {
      Records: Array.from(
        { length: 200 },
        (_, i) => s3Event(`inbox/patent-count/gone/${i}.jsonl`).Records[0],
      ),
    },
    failed: false,
    logs: ['inbox/patent-count/gone/199.jsonl'],
  },
  {
    name: 'an S3 key of 2,000 characters',
    body: s3Event(`inbox/patent-count/${'k'.repeat(2000)}/m.jsonl`),
    failed: false,
    logs: ['no longer in the bucket'],
  },
];
