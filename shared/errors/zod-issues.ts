/**
 * zod issues as messages a person can act on: `field: what is wrong`, one per issue, joined by `; `
 * (`directions[0].ticked: expected boolean, received string; name: is required (string)`). Paths
 * read as in code, under the caller's root (`body`, `input`, `schedules[2]`); an unknown key is
 * named as the field it is; zod's "Invalid input: " is dropped; a missing field "is required". An
 * issue about the value as a whole (no path, no root) is its message alone. Given the file (and
 * line) the value came from, each message starts `file:line: `.
 */
import type * as z from 'zod';

/** Where the value that failed came from, as far as the caller knows. */
export interface IssueContext {
  /** The field the value sits under, put before every path (`body`, `input`, `schedules[2]`). */
  root?: string | undefined;
  /** The file the value was read from: each message starts with it. */
  file?: string | undefined;
  /** The line of that file (with `file`): `file:line: `. */
  line?: number | undefined;
  /** At most this many issues are told, then how many more there are (default: every one). */
  limit?: number | undefined;
}

type Issues = z.ZodError | readonly z.core.$ZodIssue[];

/** A path as code spells it: `items[2].name`, after `root` when given (`body.items[2].name`). */
export function issuePath(path: readonly PropertyKey[], root = ''): string {
  let out = root;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out.length > 0 ? `.${String(part)}` : String(part);
  }
  return out;
}

/** What an issue says, without its path: zod's "Invalid input: " dropped, a missing field "is required". */
function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message))
    return `is required (${issue.expected})`;
  return issue.message.replace(/^Invalid input: /, '');
}

/** One issue as `field: message` (an unknown-keys issue: one `field: unknown field` per key). */
function issueTexts(issue: z.core.$ZodIssue, root: string): string[] {
  if (issue.code === 'unrecognized_keys')
    return issue.keys.map((key) => `${issuePath([...issue.path, key], root)}: unknown field`);
  const path = issuePath(issue.path, root);
  const message = issueMessage(issue);
  if (path === '' || message.startsWith(`${path}: `)) return [message];
  return [`${path}: ${message}`];
}

/** Every issue as its own message (`field: message`), each after the file and line when given. */
export function issueMessages(issues: Issues, context: IssueContext = {}): string[] {
  const list = 'issues' in issues ? issues.issues : issues;
  const texts = list.flatMap((issue) => issueTexts(issue, context.root ?? ''));
  const limit = context.limit ?? texts.length;
  const told = texts.length > limit ? [...texts.slice(0, limit), `and ${texts.length - limit} more`] : texts;
  if (context.file === undefined) return told;
  const where = context.line === undefined ? context.file : `${context.file}:${context.line}`;
  return told.map((text) => `${where}: ${text}`);
}

/** Every issue in one line: `field: message; other: message`. */
export function formatIssues(issues: Issues, context: IssueContext = {}): string {
  return issueMessages(issues, context).join('; ');
}

/** One issue as data: where (`body.input.text`) and what is wrong, for a form to show beside the field. */
export interface IssueAt {
  path: string;
  message: string;
}

/** Every issue as `{path, message}` under `root` (an unknown key: its own path, "unknown field"). */
export function issueList(issues: Issues, root = ''): IssueAt[] {
  const list = 'issues' in issues ? issues.issues : issues;
  return list.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: issuePath([...issue.path, key], root), message: 'unknown field' }))
      : [{ path: issuePath(issue.path, root), message: issueMessage(issue) }],
  );
}
