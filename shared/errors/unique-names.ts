/**
 * A zod refinement step for lists whose items are named (schedules, reviewer rules): a name used by
 * an earlier item is an issue at the later item's `name` (`schedules[3].name: "nightly" is used
 * twice`), so the file's author is pointed at the line to change.
 */
import type * as z from 'zod';

/** Adds an issue at `[...path, index, 'name']` for each item whose name an earlier item took. */
export function uniqueNames(
  items: readonly { name: string }[],
  path: readonly (string | number)[],
  ctx: z.RefinementCtx,
): void {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    if (seen.has(item.name))
      ctx.addIssue({
        code: 'custom',
        path: [...path, index, 'name'],
        message: `"${item.name}" is used twice`,
      });
    seen.add(item.name);
  });
}
