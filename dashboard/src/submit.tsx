/**
 * How a form is sent, the same on every form that starts work (New job, Upload a manifest): busy while
 * it goes, a second submit ignored until the first is answered, each problem shown beside its field
 * (the page's own checks, and the server's issues mapped from their paths to the form's fields), and
 * an error summary that takes the focus and links to each field at fault.
 */
import { useRef, useState } from 'preact/hooks';
import type { FieldOfPath, FormProblem } from './form-problems';
import { problemsOfRefusal } from './form-problems';

export interface Submit {
  busy: boolean;
  problems: FormProblem[];
  /** The problem of one field (by element id), to show beside it. */
  problemOf(field: string): string | undefined;
  /** Forgets the problem of a field once the person changes it. */
  clear(field: string): void;
  /**
   * Sends the form: `check()` first (problems found stop it), then `work()`; a refusal becomes
   * problems through `fieldOf`. A second call while one runs does nothing.
   */
  run(options: {
    check?: () => FormProblem[];
    work: () => Promise<void>;
    fieldOf: FieldOfPath;
  }): Promise<void>;
  /** The summary's element: it takes the focus when problems are shown. */
  summary: { current: HTMLDivElement | null };
}

export function useSubmit(): Submit {
  const [busy, setBusy] = useState(false);
  const [problems, setProblems] = useState<FormProblem[]>([]);
  const running = useRef(false);
  const summary = useRef<HTMLDivElement>(null);
  const show = (found: FormProblem[]) => {
    setProblems(found);
    // After the render that shows them: screen readers read the summary as it takes the focus.
    if (found.length) setTimeout(() => summary.current?.focus(), 0);
  };
  return {
    busy,
    problems,
    problemOf: (field) => problems.find((problem) => problem.field === field)?.message,
    clear: (field) => {
      if (problems.some((problem) => problem.field === field))
        setProblems(problems.filter((problem) => problem.field !== field));
    },
    async run({ check, work, fieldOf }) {
      if (running.current) return;
      const found = check?.() ?? [];
      if (found.length) {
        show(found);
        return;
      }
      running.current = true;
      setBusy(true);
      setProblems([]);
      try {
        await work();
      } catch (failure) {
        show(problemsOfRefusal(failure, fieldOf));
      } finally {
        running.current = false;
        setBusy(false);
      }
    },
    summary,
  };
}

/** The problems at the top of a form, each a link to its field; it takes the focus when shown. */
export function ErrorSummary({ submit, title }: { submit: Submit; title: string }) {
  if (submit.problems.length === 0) return null;
  const focus = (field: string) => (event: Event) => {
    event.preventDefault();
    document.getElementById(field)?.focus();
  };
  return (
    <div
      class="error-summary"
      role="alert"
      tabIndex={-1}
      ref={submit.summary}
      aria-labelledby="error-summary-title"
    >
      <h3 id="error-summary-title">{title}</h3>
      <ul>
        {submit.problems.map((problem) => (
          <li>
            {problem.field ? (
              <a href={`#${problem.field}`} onClick={focus(problem.field)}>
                {problem.label}: {problem.message}
              </a>
            ) : (
              `${problem.label}: ${problem.message}`
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The line under a field that says what is wrong with it (its id `<field>-problem`, for aria-describedby). */
export function FieldProblem({ field, submit }: { field: string; submit: Submit }) {
  const problem = submit.problemOf(field);
  return problem ? (
    <span id={`${field}-problem`} class="problem">
      {problem}
    </span>
  ) : null;
}

/** The aria attributes of a field: its hint and, when it has one, its problem. */
export function fieldAria(field: string, submit: Submit, hint = true) {
  const problem = submit.problemOf(field);
  const described = [hint ? `${field}-hint` : '', problem ? `${field}-problem` : '']
    .filter(Boolean)
    .join(' ');
  return {
    ...(described ? { 'aria-describedby': described } : {}),
    'aria-invalid': problem ? ('true' as const) : undefined,
  };
}
