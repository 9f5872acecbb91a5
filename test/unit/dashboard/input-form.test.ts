// The dashboard's job form from a workflow's input schema: the fields, their defaults and limits,
// and the input the typed values make (or what is wrong with them), for real workflows.
import { describe, expect, it } from 'vitest';
import {
  jobApiRefusalText,
  problemsOfRefusal,
  type SentFile,
  storageRefusalText,
  withoutQueries,
} from '../../../dashboard/src/form-problems';
import { formFields, inputOf, valuesOf } from '../../../dashboard/src/input-form';
import { describeWorkflow } from '../../../shared/cli/commands/workflows';
import { workflows } from '../../../shared/workflows';

const docOf = (name: string) => describeWorkflow(workflows.get(name)!);

describe('the job form of a workflow', () => {
  it('has a field per input property, the main field first, with its kind, default and limits', () => {
    const fields = formFields(docOf('novelty-check'));
    expect(fields[0]).toMatchObject({ name: 'text', kind: 'longtext', required: true });
    const byName = new Map(fields.map((field) => [field.name, field]));
    expect(byName.get('lang')).toMatchObject({ kind: 'choice', choices: ['cn', 'en'], required: false });
    expect(byName.get('bibliography')).toMatchObject({ kind: 'flag' });
    expect(byName.get('title')?.hint).toContain('at most 200 characters');
    expect(byName.get('pbdStart')?.hint).toMatch(/matches/);
    expect(valuesOf(fields)).toMatchObject({ text: '', lang: 'en', bibliography: 'true' });
  });

  it('makes the input the workflow accepts from the example, leaving defaults out', () => {
    const doc = docOf('novelty-check');
    const fields = formFields(doc);
    const { input, problems } = inputOf(fields, valuesOf(fields, doc.example as Record<string, unknown>));
    expect(problems).toEqual({});
    expect(workflows.get('novelty-check')!.input.safeParse(input).success).toBe(true);
    expect(input).not.toHaveProperty('bibliography');
    expect(inputOf(fields, { ...valuesOf(fields), text: 'x', bibliography: 'false' }).input).toMatchObject({
      bibliography: false,
    });
  });

  it('says what is wrong with each field, by name, as the schema would', () => {
    const fields = formFields(docOf('novelty-check'));
    const { problems } = inputOf(fields, {
      ...valuesOf(fields),
      title: 'x'.repeat(201),
      pbdStart: 'last spring',
      lang: 'fr',
    });
    expect(problems).toEqual({
      text: 'is required',
      title: 'takes at most 200 characters (201 now)',
      pbdStart: expect.stringMatching(/^does not match/),
      lang: 'must be one of cn, en',
    });
  });

  it('reads numbers and lists, and names the field of a refusal of the server', () => {
    for (const [name, doc] of [...workflows.keys()].map((key) => [key, docOf(key)] as const)) {
      const fields = formFields(doc);
      const { problems } = inputOf(fields, valuesOf(fields, doc.example as Record<string, unknown>));
      // Every workflow's own example passes its form (call's example is an operation's).
      expect(problems, name).toEqual({});
    }
  });
});

describe('a refusal of the server as the form problems', () => {
  /** A refusal as the dashboard's api throws it: the message, and the issues when the server gave them. */
  const refused = (message: string, issues: { path: string; message: string }[] = []) =>
    Object.assign(new Error(message), { issues });
  const fieldOf = (path: string) =>
    path === 'body.input.query' ? { field: 'field-query', label: 'query' } : undefined;

  it('puts each issue at the field its path names, the rest under their path', () => {
    const refusal = refused('invalid input', [
      { path: 'body.input.query', message: 'must not be empty' },
      { path: 'body.input.other', message: 'unknown field' },
    ]);
    expect(problemsOfRefusal(refusal, fieldOf)).toEqual([
      { field: 'field-query', label: 'query', message: 'must not be empty' },
      { label: 'body.input.other', message: 'unknown field' },
    ]);
    // A message that names its field already does not name it twice.
    expect(
      problemsOfRefusal(
        refused('invalid input', [{ path: 'body.input.query', message: 'query: at most 200 characters' }]),
        fieldOf,
      ),
    ).toEqual([{ field: 'field-query', label: 'query', message: 'at most 200 characters' }]);
  });

  it('reads the field from a message without issues, else shows the message whole', () => {
    expect(problemsOfRefusal(refused('body.input.query: too long'), fieldOf)).toEqual([
      { field: 'field-query', label: 'query', message: 'too long' },
    ]);
    expect(problemsOfRefusal(refused('the job API answered 500'), fieldOf)).toEqual([
      { label: 'Refused by the job API', message: 'the job API answered 500' },
    ]);
  });

  it('says a refusal that names no field in words, and never a presigned URL’s query', () => {
    const tooLarge = Object.assign(
      refused('the request body is over 1 MiB (1048576 bytes), this API’s limit.'),
      {
        status: 413,
        code: 'body-too-large',
      },
    );
    expect(problemsOfRefusal(tooLarge, fieldOf)).toEqual([
      {
        label: 'Refused by the job API',
        message: 'the job API takes at most 1,024 KB a request: send less at once',
      },
    ]);
    const stored = Object.assign(
      refused(
        'storage said no at https://bucket.s3.amazonaws.com/inbox/a.jsonl?X-Amz-Signature=abc123&X-Amz-Credential=AKIA',
      ),
      { code: 'storage-refused' },
    );
    const [shown] = problemsOfRefusal(stored, fieldOf);
    expect(shown).toEqual({
      label: 'Refused by storage',
      message: 'storage said no at https://bucket.s3.amazonaws.com/inbox/a.jsonl',
    });
  });
});

describe('a storage refusal of a presigned upload, in words', () => {
  const manifest = { name: 'patents.jsonl', bytes: 31 * 1024 * 1024, kind: 'manifest' as const };
  const document = { name: 'dryer.pdf', bytes: 120 * 1024, kind: 'document' as const };
  /** S3's error body. */
  const s3 = (code: string, message: string, more = '') =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>${more}<RequestId>4442587FB7D0A2F9</RequestId><HostId>eftixk72aD6Ap51TnqcoF8eFidJG9Z/2mkiDFu8yU9AS1ed4OpIszj7UDNEHGran</HostId></Error>`;

  it('names each S3 code’s cause and what to do, never the XML', () => {
    const cases: [number, string, SentFile, RegExp][] = [
      [
        400,
        s3(
          'EntityTooLarge',
          'Your proposed upload exceeds the maximum allowed size',
          '<ProposedSize>32505856</ProposedSize><MaxSizeAllowed>26214400</MaxSizeAllowed>',
        ),
        manifest,
        /^storage refused it \(400 EntityTooLarge\): patents\.jsonl is 31 MB; uploads here take at most 25 MB: split the manifest into smaller files, or run opflow ingest patents\.jsonl/,
      ],
      [
        403,
        s3(
          'AccessDenied',
          'Invalid according to Policy: Policy Condition failed: ["content-length-range", 1, 26214400]',
        ),
        manifest,
        /^storage refused it \(403 AccessDenied\): patents\.jsonl is 31 MB; uploads here take at most 25 MB: split the manifest/,
      ],
      [
        403,
        s3(
          'AccessDenied',
          'Invalid according to Policy: Policy Condition failed: ["eq", "$Content-Type", "text/csv"]',
        ),
        manifest,
        /the upload takes only text\/csv files, and patents\.jsonl was sent as another type: choose a file of that type$/,
      ],
      [
        403,
        s3('AccessDenied', 'Request has expired', '<Expires>2026-11-28T10:00:00Z</Expires>'),
        document,
        /\(403 AccessDenied\): its upload link expired \(links last 15 minutes\): send it again/,
      ],
      [
        400,
        s3('ExpiredToken', 'The provided token has expired.'),
        manifest,
        /its upload link expired .*start the batch again for a fresh link/,
      ],
      [
        403,
        s3(
          'SignatureDoesNotMatch',
          'The request signature we calculated does not match the signature you provided.',
          '<StringToSign>AWS4-HMAC-SHA256 secret-ish</StringToSign><SignatureProvided>abc</SignatureProvided>',
        ),
        document,
        /\(403 SignatureDoesNotMatch\): what was sent is not what the upload link was signed for/,
      ],
      [
        400,
        s3('XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match'),
        document,
        /its content is not what was checked \(its SHA-256 differs\)/,
      ],
      [
        400,
        s3('BadDigest', 'The Content-MD5 or checksum value you specified did not match'),
        document,
        /the file changed since the check/,
      ],
      [
        403,
        s3('AccessDenied', 'Access Denied'),
        document,
        /storage does not let this link write there: tell whoever runs opflow/,
      ],
      [404, s3('NoSuchBucket', 'The specified bucket does not exist'), document, /its bucket does not exist/],
      [
        400,
        s3('RequestTimeout', 'Your socket connection to the server was not read from or written to'),
        document,
        /too slow and storage closed it: send it again/,
      ],
      [
        503,
        s3('SlowDown', 'Please reduce your request rate.'),
        document,
        /\(503 SlowDown\): storage is busy or unavailable for now: send it again in a minute/,
      ],
      [
        500,
        s3('InternalError', 'We encountered an internal error.'),
        document,
        /storage failed on its side: send it again/,
      ],
      [503, '', document, /^storage refused it \(503\): storage is busy/],
      [403, '', document, /^storage refused it \(403\): storage does not let this link write there/],
      [
        400,
        s3('InvalidArgument', 'Unsupported header x-amz-foo received for this API call.'),
        document,
        /\(400 InvalidArgument\): Unsupported header x-amz-foo received for this API call; check the file again/,
      ],
    ];
    for (const [status, body, sent, expected] of cases) {
      const text = storageRefusalText(status, body, sent);
      expect(text, body).toMatch(expected);
      expect(text).not.toMatch(/<|RequestId|HostId|StringToSign|AWS4-HMAC/);
    }
  });

  it('strips the query of any URL it would show', () => {
    const text = storageRefusalText(
      400,
      s3(
        'InvalidRequest',
        'bad https://b.s3.amazonaws.com/inbox/x?X-Amz-Signature=deadbeef&amp;X-Amz-Credential=AKIAX',
      ),
      document,
    );
    expect(text).toContain('https://b.s3.amazonaws.com/inbox/x');
    expect(text).not.toMatch(/deadbeef|AKIAX|X-Amz-Signature=/);
    expect(withoutQueries('see X-Amz-Signature=abc&X-Amz-Credential=AKIA/x')).toBe(
      'see X-Amz-Signature=…&X-Amz-Credential=…',
    );
  });
});

describe('the job API’s refusals that name no field, in words', () => {
  const sent: SentFile = { name: 'big.jsonl', bytes: 880 * 1024, kind: 'manifest', requestBytes: 1_130_000 };

  it('413: the file’s size as sent, the server’s limit, and what to do', () => {
    const message =
      'the request body is over 1 MiB (1048576 bytes), this API’s limit. A larger manifest goes through `opflow ingest <manifest>` on the machine that runs opflow.';
    expect(jobApiRefusalText({ status: 413, code: 'body-too-large', message }, sent)).toBe(
      'big.jsonl is 880 KB, 1,104 KB as sent (its quotes and line ends escaped in JSON); the job API takes at most 1,024 KB a request: split the manifest into smaller files, or run opflow ingest big.jsonl on a machine that runs opflow',
    );
    expect(
      jobApiRefusalText(
        { status: 413, code: 'body-too-large', message },
        { name: '3 documents', bytes: 700 * 1024, kind: 'documents', requestBytes: 960_000 },
      ),
    ).toMatch(/^3 documents are 700 KB, 938 KB as sent \(base64 in JSON\); .*: send fewer at once/);
  });

  it('415 and a body that is not JSON: what happened and what to do; other refusals say it themselves', () => {
    expect(
      jobApiRefusalText(
        {
          status: 415,
          code: 'unsupported-media-type',
          message: 'send JSON (content-type application/json), not text/plain',
        },
        sent,
      ),
    ).toBe(
      'the job API takes JSON only and the request reached it as something else (send JSON (content-type application/json), not text/plain): reload the page; if it happens again, a proxy between you and the server changes requests',
    );
    expect(
      jobApiRefusalText(
        {
          status: 400,
          code: 'invalid-json',
          message: 'the request body is not JSON: Unexpected end of JSON input',
        },
        sent,
      ),
    ).toMatch(
      /^the job API could not read the request as JSON \(the request body is not JSON: Unexpected end of JSON input\): reload the page/,
    );
    expect(
      jobApiRefusalText({ status: 400, code: 'invalid-request', message: 'body.workflow: unknown' }, sent),
    ).toBeUndefined();
  });
});
