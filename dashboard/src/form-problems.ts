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
  return [at ? { ...at, message: named![2]! } : { label: 'The server refused it', message: message ?? '' }];
}
