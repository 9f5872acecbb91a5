import { editDistance } from './edit-distance';

/**
 * The "did you mean" of a name that is not known (a workflow, a command, an operation): the nearest
 * known one, or none. Near is a few edits away from the whole name, or (a name of 5 characters or
 * more) from its start as far as the name typed goes (`novely` is one edit from `novelt`, the start
 * of `novelty-check`), or containing it (or contained in it). A few is at most 2, or a third of the
 * name typed.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const typed = name.toLowerCase();
  const distance = (candidate: string) => {
    const lower = candidate.toLowerCase();
    if (lower.includes(typed) || typed.includes(lower)) return 0;
    let nearest = editDistance(typed, lower);
    // Its start, as long as the name typed or one longer (a letter left out), for a name of 5 or more.
    if (typed.length >= 5) {
      for (const length of [typed.length, typed.length + 1]) {
        if (length < lower.length) nearest = Math.min(nearest, editDistance(typed, lower.slice(0, length)));
      }
    }
    return nearest;
  };
  const most = Math.max(2, Math.floor(typed.length / 3));
  return known
    .map((candidate) => ({ candidate, distance: distance(candidate) }))
    .filter((near) => near.distance <= most)
    .sort((a, b) => a.distance - b.distance)[0]?.candidate;
}

/** ` (did you mean <nearest>?)` after an unknown name, or '' when no known name is near. */
export function didYouMean(name: string, known: readonly string[]): string {
  const closest = closestName(name, known);
  return closest === undefined ? '' : ` (did you mean ${closest}?)`;
}
