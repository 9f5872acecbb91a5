/**
 * The "did you mean" of a name that is not known (a workflow, a command): the nearest known one,
 * a few edits away or containing it (or contained in it), or none.
 */
import { editDistance } from '../openplatform/edit-distance';

export function closestName(name: string, known: readonly string[]): string | undefined {
  const distance = (candidate: string) =>
    candidate.includes(name) || name.includes(candidate) ? 0 : editDistance(name, candidate);
  return known
    .filter((candidate) => distance(candidate) <= Math.max(2, Math.floor(name.length / 3)))
    .sort((a, b) => distance(a) - distance(b))[0];
}
