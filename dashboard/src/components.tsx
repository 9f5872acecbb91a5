/** The pieces every page is made of: status badges, notices, the pager, sign-in, sandbox warnings. */
import type { ComponentChildren, Ref } from 'preact';
import { useState } from 'preact/hooks';
import { tokenKey } from './api';
import { formatTime, statusText, toDate } from './format';
import { useFocusHeading } from './hooks';
import { type Filters, pageHash } from './routing';
import type { JobView } from './types';

/** The warning a view of sandbox data opens with. */
export function SandboxBanner({ what }: { what: string }) {
  return (
    <p class="notice sandbox" role="note">
      <strong>Sandbox data: not real publications.</strong> {what} against opflow's built-in sandbox, which
      simulates the Open Platform; set OPFLOW_API_KEY to run against the platform.
    </p>
  );
}

/** A small tag beside a job's title in tables. */
export function SandboxTag({ job }: { job: Pick<JobView, 'upstream'> }) {
  return job.upstream?.kind === 'sandbox' ? (
    <>
      {' '}
      <span class="tag sandbox" title="simulated data, not real publications">
        sandbox
      </span>
    </>
  ) : null;
}

/** A status as a coloured pill: green done, red failed, amber waiting for a person, blue under way. */
export function StatusBadge({ status }: { status: string }) {
  const text = statusText(status);
  return <span class={`status status-${status}`}>{text.charAt(0).toUpperCase() + text.slice(1)}</span>;
}

/** A page's heading with its subtitle and its actions on the right. */
export function PageHead(props: {
  heading: Ref<HTMLHeadingElement>;
  title: ComponentChildren;
  subtitle?: ComponentChildren;
  back?: { href: string; label: string } | undefined;
  children?: ComponentChildren;
}) {
  return (
    <div class="page-head">
      <div>
        {props.back ? (
          <p class="back">
            <a href={props.back.href}>← {props.back.label}</a>
          </p>
        ) : null}
        <h1 tabIndex={-1} ref={props.heading}>
          {props.title}
        </h1>
        {props.subtitle ? <p class="subtitle">{props.subtitle}</p> : null}
      </div>
      {props.children ? <div class="actions">{props.children}</div> : null}
    </div>
  );
}

/** Headline figures as tiles: a label, a value, and a line under it. */
export function Tiles(props: {
  label: string;
  tiles: { label: string; value: ComponentChildren; sub?: string | undefined; tone?: string | undefined }[];
}) {
  return (
    <dl class="tiles" aria-label={props.label}>
      {props.tiles.map((tile) => (
        <div class={`tile ${tile.tone ?? ''}`}>
          <dt>{tile.label}</dt>
          <dd>
            {tile.value}
            {tile.sub ? <span class="sub">{tile.sub}</span> : null}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** A moment with its date, and the exact time in its tooltip and `datetime`. */
export function When({ at }: { at: string | undefined | null }) {
  const date = toDate(at);
  if (!date) return null;
  return (
    <time dateTime={date.toISOString()} title={date.toString()}>
      {formatTime(at)}
    </time>
  );
}

export function Notice({ error, ok }: { error?: string | undefined; ok?: string | undefined }) {
  if (error)
    return (
      <p class="notice error" role="alert">
        {error}
      </p>
    );
  if (ok)
    return (
      <p class="notice ok" role="status">
        {ok}
      </p>
    );
  return null;
}

/** First, Previous and Next page links of a list whose address holds its cursors (pageHash). */
export function Pager(props: {
  path: string;
  filters: Filters;
  cursor: string;
  trail: string[];
  next: string | undefined;
}) {
  const { path, filters, cursor, trail, next } = props;
  return (
    <nav class="pager" aria-label="Pages">
      {cursor ? <a href={pageHash(path, filters, '', [])}>First page</a> : null}
      {cursor && trail.length > 0 ? (
        <a href={pageHash(path, filters, trail[trail.length - 1]!, trail.slice(0, -1))} rel="prev">
          Previous page
        </a>
      ) : null}
      {next ? (
        <a href={pageHash(path, filters, next, [...trail, cursor])} rel="next">
          Next page
        </a>
      ) : null}
    </nav>
  );
}

/** A page of one thing (a job, a batch) before it is loaded, or when it cannot be. */
export function Pending(props: {
  back: string;
  backLabel: string;
  title: string;
  heading: Ref<HTMLHeadingElement>;
  error: string | undefined;
}) {
  return (
    <main id="main">
      <p>
        <a href={props.back}>← {props.backLabel}</a>
      </p>
      <h1 tabIndex={-1} ref={props.heading}>
        {props.title}
      </h1>
      {props.error ? <Notice error={props.error} /> : <p aria-busy="true">Loading…</p>}
    </main>
  );
}

export function TokenForm({ reason, onSaved }: { reason: string; onSaved: () => void }) {
  const [value, setValue] = useState('');
  const heading = useFocusHeading('token');
  const submit = (event: Event) => {
    event.preventDefault();
    // The field as it is now, not the last render's state: Enter can come before the re-render.
    const field = (event.currentTarget as HTMLFormElement).elements.namedItem('token');
    const typed = field instanceof HTMLInputElement ? field.value : value;
    sessionStorage.setItem(tokenKey, typed.trim());
    onSaved();
  };
  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Sign in to this opflow server
      </h1>
      <Notice error={reason} />
      <form class="token" onSubmit={submit}>
        <label for="token">Server token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="current-password"
          required
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
          aria-describedby="token-help"
        />
        <p id="token-help" class="muted small">
          The value of <code>OPFLOW_SERVE_TOKEN</code> on the machine that runs <code>opflow serve</code> (or
          your JWT for the AWS job API). It is kept in this browser tab only.
        </p>
        <div>
          <button class="primary" type="submit">
            Sign in
          </button>
        </div>
      </form>
    </main>
  );
}

/** A table column's heading: its text, right-aligned for figures, or read by screen readers only. */
export type Column = string | { label: string; num?: boolean; hidden?: boolean };

/** The heading row of a table, one `th scope="col"` a column. */
export function TableHead({ columns }: { columns: Column[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => {
          const { label, num, hidden } =
            typeof column === 'string' ? { label: column, num: false, hidden: false } : column;
          return (
            <th scope="col" class={num ? 'num' : undefined}>
              {hidden ? <span class="visually-hidden">{label}</span> : label}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

/** Lines of a manifest that cannot be used: where, the line's id, and why. */
export function ProblemsTable(props: {
  caption: string;
  problems: { position: string; id?: string | undefined; reason: string }[];
}) {
  return (
    <table class="jobs">
      <caption>{props.caption}</caption>
      <TableHead columns={['Where', 'Id', 'Why']} />
      <tbody>
        {props.problems.map((problem) => (
          <tr>
            <td class="nowrap">{problem.position}</td>
            <td>{problem.id ?? ''}</td>
            <td>{problem.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
