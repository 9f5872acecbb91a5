/**
 * A list as a table, the same on every page: "Loading…" (aria-busy) until its rows come, then a table
 * whose caption names it (its accessible name: another caption when it is empty), one heading row of
 * `th scope="col"` and a row per item. In a card of its own unless it sits in one (`card: false`);
 * either way it scrolls sideways on its own when the screen is narrower than it.
 */
import type { ComponentChildren } from 'preact';
import { type Column, TableHead } from './components';

export function ListTable<T>(props: {
  /** The items; undefined while they load. */
  rows: readonly T[] | undefined;
  /** What shows while they load, e.g. "Loading batches…". */
  loading: string;
  columns: Column[];
  /** The caption when there are items. */
  caption: (rows: readonly T[]) => ComponentChildren;
  /** The caption when there are none: what to do to have some. */
  empty: ComponentChildren;
  row: (item: T) => ComponentChildren;
  /** In a card of its own (default), or bare inside a section that is one. */
  card?: boolean;
  /** The caption read by screen readers only (a section heading says it already). */
  captionHidden?: boolean;
}) {
  const { rows, card = true } = props;
  if (rows === undefined) return <p aria-busy="true">{props.loading}</p>;
  const table = (
    <table class="jobs">
      <caption class={props.captionHidden ? 'visually-hidden' : undefined}>
        {rows.length === 0 ? props.empty : props.caption(rows)}
      </caption>
      <TableHead columns={props.columns} />
      <tbody>{rows.map((item) => props.row(item))}</tbody>
    </table>
  );
  return <div class={card ? 'table-card' : 'table-scroll'}>{table}</div>;
}
