/**
 * A form's problems: what the page or the server finds wrong, each at the field it is about. The
 * server's refusals carry `issues` with paths (`body.input.text`); a form says which of its fields
 * each path means.
 */

/** A problem to show: the field's element id and label when it has one, and what is wrong. */
export interface FormProblem {
  /** The id of the field's element (`field-text`); none for a problem of the form as a whole. */
  field?: string | undefined;
  label: string;
  message: string;
}

/** The field a server issue's path names (`body.input.text`), as the form knows it; undefined if none. */
export type FieldOfPath = (path: string) => { field: string; label: string } | undefined;

/** A refusal of the server as problems: each issue at its field, else the message whole. */
export function problemsOfRefusal(failure: unknown, fieldOf: FieldOfPath): FormProblem[] {
  const { issues = [], message } = failure as Error & {
    issues?: readonly { path: string; message: string }[];
  };
  const mapped = issues.map((issue): FormProblem => {
    const at = fieldOf(issue.path);
    if (!at) return { label: issue.path, message: issue.message };
    // The input schemas' messages start with their field ("patent: a publication number..."): said once.
    const own = issue.message.startsWith(`${at.label}: `)
      ? issue.message.slice(at.label.length + 2)
      : issue.message;
    return { ...at, message: own };
  });
  if (mapped.length) return mapped;
  // A refusal without issues may still start with the field it is about (`body.workflow: ...`).
  const named = /^([\w.[\]]+): (.*)$/s.exec(message ?? '');
  const at = named ? fieldOf(named[1]!) : undefined;
  if (at) return [{ ...at, message: named![2]! }];
  // Said in words where the status says more than the message (413, 415, a body that is not JSON).
  const { status, code } = failure as { status?: number; code?: string };
  const text = jobApiRefusalText({ status, code, message: message ?? '' }) ?? message ?? '';
  return [
    {
      label: code === 'storage-refused' ? 'Refused by storage' : 'Refused by the job API',
      message: withoutQueries(text),
    },
  ];
}

/** A file sent (a manifest, or one document): its name and size, and the request's size as it went. */
export interface SentFile {
  name: string;
  bytes: number;
  /** One manifest, one document, or documents together (`name` then says how many). */
  kind: 'manifest' | 'document' | 'documents';
  /** The job API request's body in bytes (a manifest goes inside JSON, its quotes and line ends escaped). */
  requestBytes?: number | undefined;
}

/** Every URL in `text` without its query or fragment: a presigned URL's signature never shows. */
export function withoutQueries(text: string): string {
  return text
    .replace(/\b([a-z][\w+.-]*:\/\/[^\s?#"'<>]*)[?#][^\s"'<>]*/gi, '$1')
    .replace(/\b(X-Amz-[\w-]+|Signature|AWSAccessKeyId|Expires|Policy)=[^&\s"'<>]+/gi, '$1=…');
}

/** A size for people: "880 KB", "31 MB" (KB below 10 MB, each rounded up). */
export function sizeText(bytes: number): string {
  return bytes < 10 * 1024 * 1024
    ? `${Math.ceil(bytes / 1024).toLocaleString()} KB`
    : `${Math.ceil(bytes / 1024 / 1024).toLocaleString()} MB`;
}

/** One element's text of an S3 error body (`<Code>EntityTooLarge</Code>`), its entities read. */
function xmlField(body: string, name: string): string | undefined {
  const found = new RegExp(`<${name}>([^<]*)</${name}>`).exec(body)?.[1];
  return found
    ?.replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();
}

/** What to do with a file too large for storage or for the job API. */
function smallerAdvice(sent: SentFile): string {
  if (sent.kind === 'manifest')
    return `split the manifest into smaller files, or run opflow ingest ${sent.name} on a machine that runs opflow`;
  return sent.kind === 'documents'
    ? 'send fewer at once, or the folder with opflow ingest <folder> on a machine that runs opflow'
    : 'send it with opflow ingest <folder> from a machine that runs opflow, or make it smaller';
}

/** "big.jsonl is", "3 documents are". */
const isOrAre = (sent: SentFile) => `${sent.name} ${sent.kind === 'documents' ? 'are' : 'is'}`;

/**
 * Why the page does not send a request whose body is over the job API's `limit` (in bytes), said
 * at the files: their size, the body's size as it would be sent, how far over, and what to do.
 * Without `requestBytes`, the file alone is over the limit (it is not read).
 */
export function overLimitText(sent: SentFile, limit: number): string {
  const bytes = sent.requestBytes ?? sent.bytes;
  const how =
    sent.kind === 'manifest'
      ? 'its quotes, backslashes and line ends escaped in JSON, characters beyond ASCII as UTF-8 bytes'
      : 'base64 in JSON';
  const asSent = sent.requestBytes === undefined ? '' : `, ${sizeText(bytes)} as sent (${how})`;
  const noLimit = sent.kind === 'manifest' ? ' (it has no size limit)' : '';
  return `${isOrAre(sent)} ${sizeText(sent.bytes)}${asSent}: ${sizeText(bytes - limit)} over the job API's limit of ${sizeText(limit)} a request; ${smallerAdvice(sent)}${noLimit}`;
}

/**
 * A storage refusal of a presigned upload (S3 answers an XML error: `<Code>`, `<Message>`, for a
 * file too large `<MaxSizeAllowed>` and `<ProposedSize>`) in words: what was refused, why (as
 * storage said it), and what the person can do. Never the XML, never a URL's query.
 */
export function storageRefusalText(status: number, body: string, sent: SentFile): string {
  const code = xmlField(body, 'Code');
  const said = xmlField(body, 'Message') ?? '';
  const head = `storage refused it (${status}${code ? ` ${code}` : ''})`;
  const policy = /Policy Condition failed: (\[[^\]]*\])/.exec(said)?.[1];
  const tooLarge = (most: number | undefined) =>
    `${isOrAre(sent)} ${sizeText(Number(xmlField(body, 'ProposedSize') ?? sent.bytes))}` +
    `${most ? `; uploads here take at most ${sizeText(most)}` : ', over what this upload takes'}: ${smallerAdvice(sent)}`;
  let why: string;
  if (code === 'EntityTooLarge' || status === 413) {
    why = tooLarge(Number(xmlField(body, 'MaxSizeAllowed')) || undefined);
  } else if (policy?.includes('content-length-range')) {
    const most = Number(/content-length-range"?,\s*\d+,\s*(\d+)/.exec(policy)?.[1]) || undefined;
    why = tooLarge(most);
  } else if (policy && /content-type/i.test(policy)) {
    const wanted = /"([^"$]+)"\s*\]$/.exec(policy)?.[1];
    why = `the upload takes ${wanted ? `only ${wanted} files` : 'another content type'}, and ${sent.name} was sent as another type: choose a file of that type`;
  } else if (policy) {
    why = `the upload was outside its policy (${policy}): check the file again and start again`;
  } else if (code === 'EntityTooSmall') {
    why = `${sent.name} is smaller than the upload takes (${sizeText(sent.bytes)}): choose the file again; an empty file is not sent`;
  } else if (
    code === 'ExpiredToken' ||
    code === 'TokenRefreshRequired' ||
    (code === 'AccessDenied' && /expired/i.test(said))
  ) {
    why = `its upload link expired (links last 15 minutes): ${sent.kind === 'manifest' ? 'start the batch again for a fresh link' : 'send it again; the page asks for fresh links'}`;
  } else if (code === 'SignatureDoesNotMatch') {
    why = `what was sent is not what the upload link was signed for (its length or headers differ): the file may have changed since the check; check it again and start again`;
  } else if (code === 'XAmzContentSHA256Mismatch' || code === 'BadDigest' || code === 'InvalidDigest') {
    why = `its content is not what was checked (its SHA-256 differs): the file changed since the check; check it again and start again`;
  } else if (code === 'AccessDenied' || code === 'InvalidAccessKeyId' || (!code && status === 403)) {
    why = `storage does not let this link write there: tell whoever runs opflow (the job API's role needs s3:PutObject on the bucket's inbox/)`;
  } else if (code === 'NoSuchBucket') {
    why = `its bucket does not exist: the stack is not fully deployed; tell whoever runs opflow`;
  } else if (code === 'RequestTimeout') {
    why = `the upload was too slow and storage closed it: send it again (on a slow connection, fewer at once)`;
  } else if (code === 'SlowDown' || code === 'ServiceUnavailable' || status === 503) {
    why = `storage is busy or unavailable for now: send it again in a minute`;
  } else if (code === 'InternalError' || status >= 500) {
    why = `storage failed on its side: send it again`;
  } else {
    const words = said.length > 200 ? `${said.slice(0, 200)}…` : said;
    why = `${words ? `${words.replace(/\.$/, '')}; ` : ''}check the file again and start again, and tell whoever runs opflow if it happens again`;
  }
  return withoutQueries(`${head}: ${why}`);
}

/**
 * The job API's refusals of a request that name no field, in words: a body over its limit (413,
 * with the limit the server names), a content type it does not take (415), a body it cannot read
 * as JSON (400 invalid-json); undefined for any other (its message says it).
 */
export function jobApiRefusalText(
  failure: { status?: number; code?: string; message: string },
  sent?: SentFile,
): string | undefined {
  const { status, code, message } = failure;
  if (status === 413 || code === 'body-too-large') {
    const limit = Number(/\((\d+) bytes\)|over (\d+) bytes/.exec(message)?.slice(1).find(Boolean));
    const most = limit
      ? `the job API takes at most ${sizeText(limit)} a request`
      : 'the request is over the job API’s limit';
    if (!sent) return `${most}: send less at once`;
    const asSent =
      sent.requestBytes && sent.requestBytes > sent.bytes * 1.05
        ? `, ${sizeText(sent.requestBytes)} as sent (${sent.kind === 'manifest' ? 'its quotes and line ends escaped in JSON' : 'base64 in JSON'})`
        : '';
    return `${isOrAre(sent)} ${sizeText(sent.bytes)}${asSent}; ${most}: ${smallerAdvice(sent)}`;
  }
  if (status === 415 || code === 'unsupported-media-type')
    return `the job API takes JSON only and the request reached it as something else (${message}): reload the page; if it happens again, a proxy between you and the server changes requests`;
  if (code === 'invalid-json')
    return `the job API could not read the request as JSON (${message}): reload the page and try again`;
  return undefined;
}
