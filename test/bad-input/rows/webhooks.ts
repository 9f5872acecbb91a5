/**
 * `POST /webhooks/{source}` on the job API server: unknown and aliased sources, missing and malformed
 * Standard Webhooks headers, timestamps outside the source's window, wrong signatures, bodies too
 * large, not JSON, or not mappable. Each answer names the header, field or limit at fault, and no
 * row creates a job.
 */

/** The suite's webhook config: `tracker` mapped (tenant acme, 2 KiB, 5 minutes), `narrow` with a 30 s window. */
export const webhookConfig = {
  webhooks: {
    'my-tracker': {
      workflow: 'patent-count',
      input: { query: { $from: '/issue/title' } },
      tenant: 'acme',
      maxBodyBytes: 2048,
    },
    narrow: { tolerance: '30s' },
  },
};
/** The secret every source of the suite has (its variable is set for `my-tracker`, `narrow` and `plain`). */
export const webhookSecret = `whsec_${Buffer.from('the bad-input suite webhook secret').toString('base64')}`;
export const otherSecret = `whsec_${Buffer.from('somebody else entirely, not us!!').toString('base64')}`;

export interface WebhookRow {
  name: string;
  /** The path's source, as sent (not encoded further). */
  source: string;
  method?: string | undefined;
  body: string | Buffer;
  /** How the delivery is signed (default: now, by the source's secret, over the body sent). */
  sign?: { id?: string; ageSeconds?: number; key?: string; over?: string } | undefined;
  /** Headers set after signing; an empty value removes the header. */
  headers?: Record<string, string> | undefined;
  status: number;
  names: (string | RegExp)[];
}

const issue = JSON.stringify({ issue: { key: 'IP-1', title: 'hinge' } });
const request = JSON.stringify({ workflow: 'patent-count', input: { query: 'hinge' } });
const row = (
  name: string,
  fields: Partial<WebhookRow>,
  status: number,
  ...names: (string | RegExp)[]
): WebhookRow => ({
  name,
  source: 'my-tracker',
  body: issue,
  ...fields,
  status,
  names,
});

export const webhookRows: WebhookRow[] = [
  row('an unknown source', { source: 'nobody' }, 404, 'no webhook source nobody'),
  row('another spelling of a mapped source', { source: 'my_tracker' }, 404, 'no webhook source my_tracker'),
  row('a source name in capitals', { source: 'MY-TRACKER' }, 404, 'no such webhook source'),
  row('a source name with an encoded slash', { source: 'my%2Ftracker' }, 404, 'no such webhook source'),
  row('a source name with broken encoding', { source: 'my%E0%A4%A' }, 404, 'no such webhook source'),
  row('a source name of 65 characters', { source: 'a'.repeat(65) }, 404, 'no such webhook source'),
  row('GET instead of POST', { method: 'GET', body: '' }, 405, 'use POST'),
  row(
    'no Standard Webhooks headers',
    { headers: { 'webhook-id': '', 'webhook-timestamp': '', 'webhook-signature': '' } },
    401,
    'webhook-id, webhook-timestamp and webhook-signature are required',
  ),
  row('no webhook-id', { headers: { 'webhook-id': '' } }, 401, 'webhook-id'),
  row('no webhook-timestamp', { headers: { 'webhook-timestamp': '' } }, 401, 'webhook-timestamp'),
  row('no webhook-signature', { headers: { 'webhook-signature': '' } }, 401, 'webhook-signature'),
  row(
    'a webhook-id of 201 characters',
    { sign: { id: 'i'.repeat(201) } },
    401,
    'webhook-id must be 1-200 visible ASCII characters',
  ),
  row(
    'a webhook-id with a space',
    { sign: { id: 'msg 1' } },
    401,
    'webhook-id must be 1-200 visible ASCII characters',
  ),
  row(
    'a webhook-timestamp in milliseconds',
    { headers: { 'webhook-timestamp': String(Date.now() * 1000) } },
    401,
    'webhook-timestamp must be whole seconds',
  ),
  row(
    'a webhook-timestamp that is a date',
    { headers: { 'webhook-timestamp': '2026-11-26T10:00:00Z' } },
    401,
    'webhook-timestamp must be whole seconds',
  ),
  row(
    'a negative webhook-timestamp',
    { headers: { 'webhook-timestamp': '-5' } },
    401,
    'webhook-timestamp must be whole seconds',
  ),
  row(
    'a webhook-timestamp 10 minutes old (window 5m)',
    { sign: { ageSeconds: 600 } },
    401,
    /webhook-timestamp is 6\d\d s in the past, outside the window of 5m/,
  ),
  row(
    'a webhook-timestamp 10 minutes ahead',
    { sign: { ageSeconds: -600 } },
    401,
    /s in the future, outside the window of 5m/,
  ),
  row('a webhook-timestamp of 1970', { headers: { 'webhook-timestamp': '0' } }, 401, 'in the past'),
  row(
    'a delivery 60 s old to a source with a 30 s window',
    { source: 'narrow', body: request, sign: { ageSeconds: 60 } },
    401,
    'outside the window of 30s',
  ),
  row(
    'a signature by another secret',
    { sign: { key: otherSecret } },
    401,
    'no v1 signature in webhook-signature matches',
  ),
  row(
    'a signature over another body',
    { sign: { over: issue.replace('hinge', 'lever') } },
    401,
    'no v1 signature',
  ),
  row(
    'a signature of another version only',
    { headers: { 'webhook-signature': 'v2,AAAA' } },
    401,
    'no v1 signature',
  ),
  row(
    'a signature that is not base64',
    { headers: { 'webhook-signature': 'v1,!!!not base64!!!' } },
    401,
    'no v1 signature',
  ),
  row(
    'a thousand wrong signatures',
    { headers: { 'webhook-signature': Array(1000).fill('v1,AAAA').join(' ') } },
    401,
    'no v1 signature',
  ),
  row(
    'a body over the source limit',
    { body: JSON.stringify({ issue: { title: 'x'.repeat(3000) } }) },
    413,
    'over 2048 bytes',
  ),
  row('a body that is not JSON', { body: '{"issue": ' }, 400, 'the body is not JSON'),
  row('an empty body', { body: '' }, 400, 'the body is not JSON'),
  row(
    'a body the mapping cannot read',
    { body: '{"issue": {}}' },
    400,
    'mapping.input.query',
    '/issue/title',
  ),
  row('a mapped value the workflow refuses', { body: '{"issue": {"title": 42}}' }, 400, 'input.query'),
  row(
    'an unmapped source without a workflow',
    { source: 'plain', body: '{"input": {"query": "x"}}' },
    400,
    'body.workflow',
  ),
  row(
    'an unmapped source with an unknown field',
    { source: 'plain', body: JSON.stringify({ ...JSON.parse(request), tenant: 'other' }) },
    400,
    'body',
    'tenant',
  ),
  row(
    'an unmapped source with an unknown workflow',
    { source: 'plain', body: '{"workflow": "nope", "input": {}}' },
    400,
    'unknown workflow "nope"',
  ),
  row(
    'an unmapped source with a bad input',
    { source: 'plain', body: '{"workflow": "patent-count", "input": {"qury": 1}}' },
    400,
    'input',
  ),
  row('an unmapped source with a JSON list', { source: 'plain', body: '[1, 2]' }, 400, 'body'),
];
