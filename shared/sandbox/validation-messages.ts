/**
 * zod issues as messages that say which field and why, the way the sandbox's invalid-parameter
 * answers and option errors put it: `directions[0].ticked: expected boolean, received string`.
 */
import type * as z from 'zod';

export function formatPath(path: readonly PropertyKey[], root = ''): string {
  let out = root;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out.length > 0 ? `.${String(part)}` : String(part);
  }
  return out.length > 0 ? out : '(body)';
}

export function formatIssue(issue: z.core.$ZodIssue, root = ''): string {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `${formatPath([...issue.path, key], root)}: unknown field`).join('; ');
  }
  const message = issue.message.replace(/^Invalid input: /, '');
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) {
    return `${formatPath(issue.path, root)}: is required (${issue.expected})`;
  }
  return `${formatPath(issue.path, root)}: ${message}`;
}

export function formatIssues(error: z.ZodError, root = ''): string {
  return error.issues.map((issue) => formatIssue(issue, root)).join('; ');
}
