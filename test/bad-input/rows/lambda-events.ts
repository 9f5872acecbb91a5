/** API Gateway events for the Lambda `api`, and SQS records for the Lambda `step-worker`. */
import { httpApiEvent } from '../../../scripts/lambda/lambda-events';
import type { LambdaRow, SqsRow } from './types';

const event = (
  method: string,
  path: string,
  options: {
    body?: string;
    base64?: boolean;
    headers?: Record<string, string>;
    claims?: Record<string, unknown>;
    query?: string;
  } = {},
) => {
  const base = httpApiEvent({
    method,
    path,
    rawQuery: options.query ?? '',
    headers: options.headers ?? (options.body ? { 'content-type': 'application/json' } : {}),
    body: undefined,
  }) as unknown as Record<string, unknown>;
  if (options.body !== undefined) {
    base.body = options.base64 ? Buffer.from(options.body, 'latin1').toString('base64') : options.body;
    base.isBase64Encoded = options.base64 === true;
  }
  if (options.claims) {
    (base.requestContext as Record<string, unknown>).authorizer = {
      jwt: { claims: options.claims, scopes: [] },
    };
  }
  return base;
};

const misconfigured = 'the API is misconfigured';
const ok = JSON.stringify({ workflow: 'patent-count', input: { query: 'TTL:(hinge)' } });

export const apiGatewayRows: LambdaRow[] = [
  { name: 'no event', event: null, status: 500, names: [misconfigured] },
  { name: 'an empty object', event: {}, status: 500, names: [misconfigured] },
  {
    name: 'a REST API (payload 1.0) event',
    event: { httpMethod: 'GET', path: '/jobs', requestContext: { requestId: 'r' } },
    status: 500,
    names: [misconfigured],
  },
  {
    name: 'a rawPath without a slash',
    event: { ...event('GET', '/jobs'), rawPath: 'jobs' },
    status: 500,
    names: [misconfigured],
  },
  {
    name: 'no method',
    event: { ...event('GET', '/jobs'), requestContext: { requestId: 'r', http: {} } },
    status: 500,
    names: [misconfigured],
  },
  {
    name: 'headers that are not strings',
    event: { ...event('GET', '/jobs'), headers: { a: 1 } },
    status: 500,
    names: [misconfigured],
  },
  {
    name: 'a body that is not a string',
    event: { ...event('POST', '/jobs'), body: { workflow: 'x' } },
    status: 500,
    names: [misconfigured],
  },
  {
    name: 'an SQS event sent to the API',
    event: { Records: [{ body: '{}' }] },
    status: 500,
    names: [misconfigured],
  },
  ...[
    ['a number', { tenant: 5 }, 'tenant claim is not a string'],
    ['a boolean', { tenant: true }, 'tenant claim is not a string'],
    ['null', { tenant: null }, 'tenant claim is not a string'],
    ['a list', { tenant: ['acme'] }, 'tenant claim is not a string'],
    ['empty', { tenant: '' }, 'tenant claim must be'],
    ['with a slash', { tenant: 'a/b' }, 'tenant claim must be'],
    ['65 characters', { tenant: 't'.repeat(65) }, 'tenant claim must be'],
    ['a numeric custom:tenant', { 'custom:tenant': 9 }, 'custom:tenant claim is not a string'],
    ['two tenants at once', { tenant: 'a', 'custom:tenant': 'b' }, 'names two different tenants'],
  ].map(
    ([name, claims, message]): LambdaRow => ({
      name: `a JWT whose tenant claim is ${name as string}`,
      event: event('GET', '/jobs', { claims: claims as Record<string, unknown> }),
      status: 403,
      names: [message as string],
    }),
  ),
  {
    name: 'a base64 body that is not UTF-8',
    event: event('POST', '/jobs', { body: '{"x":"\xff\xfe"}', base64: true }),
    status: 400,
    names: ['not UTF-8'],
  },
  {
    name: 'a body that is not JSON',
    event: event('POST', '/jobs', { body: '{"workflow":' }),
    status: 400,
    names: ['not JSON'],
  },
  {
    name: 'a body in the wrong type',
    event: event('POST', '/jobs', { body: ok, headers: { 'content-type': 'text/csv' } }),
    status: 415,
    names: ['application/json'],
  },
  {
    name: 'an unknown workflow',
    event: event('POST', '/jobs', { body: JSON.stringify({ workflow: 'x', input: {} }) }),
    status: 400,
    names: ['unknown workflow "x"'],
  },
  {
    name: 'a deadline past a year',
    event: event('POST', '/jobs', {
      body: JSON.stringify({ workflow: 'patent-count', input: { query: 'q' }, deadlineMs: 9007199254740991 }),
    }),
    status: 400,
    names: ['body.deadlineMs'],
  },
  {
    name: 'a bound caller creating for another tenant',
    event: event('POST', '/jobs', {
      body: JSON.stringify({ workflow: 'patent-count', input: { query: 'q' }, tenant: 'other' }),
      claims: { tenant: 'acme' },
    }),
    status: 403,
    names: ['only create jobs of tenant acme'],
  },
  {
    name: 'a bound caller listing another tenant',
    event: event('GET', '/jobs', { query: 'tenant=other', claims: { tenant: 'acme' } }),
    status: 403,
    names: ['only list jobs of tenant acme'],
  },
  {
    name: 'a bad limit',
    event: event('GET', '/jobs', { query: 'limit=0' }),
    status: 400,
    names: ['query.limit'],
  },
  { name: 'an unknown route', event: event('GET', '/admin'), status: 404, names: ['no route /admin'] },
  {
    name: 'a wrong method',
    event: event('DELETE', '/jobs'),
    status: 405,
    names: ['DELETE /jobs is not supported'],
  },
  { name: 'a bad job id', event: event('GET', '/jobs/..%2F..'), status: 400, names: ['path.id'] },
];

const record = (messageId: string, body: unknown, extra: Record<string, unknown> = {}) => ({
  messageId,
  receiptHandle: `rh-${messageId}`,
  body,
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '0',
    SenderId: 'x',
    ApproximateFirstReceiveTimestamp: '0',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:opflow-work',
  awsRegion: 'us-east-1',
  ...extra,
});
const sqs = (...records: unknown[]) => ({ Records: records });

export const sqsRows: SqsRow[] = [
  {
    name: 'a body that is not JSON',
    event: sqs(record('m1', 'hello')),
    failed: ['m1'],
    logs: ['work message is not JSON'],
  },
  {
    name: 'a JSON body of the wrong shape',
    event: sqs(record('m2', '{"job": "x"}')),
    failed: ['m2'],
    logs: ['work message is not {jobId, version}', 'jobId'],
  },
  {
    name: 'a version that is a string',
    event: sqs(record('m3', '{"jobId": "01J00000000000000000000000", "version": "1"}')),
    failed: ['m3'],
    logs: ['version'],
  },
  {
    name: 'a negative version',
    event: sqs(record('m4', '{"jobId": "01J00000000000000000000000", "version": -1}')),
    failed: ['m4'],
    logs: ['version'],
  },
  { name: 'an empty body', event: sqs(record('m5', '')), failed: ['m5'], logs: ['work message is not JSON'] },
  {
    name: 'a JSON array body',
    event: sqs(record('m6', '[1]')),
    failed: ['m6'],
    logs: ['work message is not {jobId, version}'],
  },
  { name: 'no body', event: sqs(record('m7', undefined)), failed: ['m7'], logs: ['the record has no body'] },
  {
    name: 'a body that is an object',
    event: sqs(record('m8', { jobId: 'x' })),
    failed: ['m8'],
    logs: ['the record has no body'],
  },
  {
    name: 'no attributes (a hand-made record)',
    event: sqs({ ...record('m9', 'x'), attributes: undefined }),
    failed: ['m9'],
    logs: ['work message is not JSON'],
  },
  {
    name: 'one bad record among good ones fails alone',
    event: sqs(record('m10', 'bad'), record('m11', '{"jobId": "01J00000000000000000000001", "version": 1}')),
    failed: ['m10'],
    logs: ['work message is not JSON'],
  },
  {
    name: 'no Records list',
    event: { records: [] },
    failed: [],
    logs: ['not an SQS event (no Records list)'],
  },
  { name: 'Records that is not a list', event: { Records: 'x' }, failed: [], logs: ['not an SQS event'] },
  {
    name: 'an API Gateway event sent to the worker',
    event: event('GET', '/jobs'),
    failed: [],
    logs: ['not an SQS event'],
  },
];
