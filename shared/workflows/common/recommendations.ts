/**
 * The recommendations of find-solution (ai33-2) and materials find-solution (ai73-2): plain strings
 * the platform marks none of, offered as options `r1`, `r2`... and echoed back as chosen (ai33-3,
 * ai73-3).
 */
import type { SelectionOption } from '../../engine/job-record';
import { plainText, shorten } from '../../reports/markdown';

/** Stable option ids `r1`, `r2`... for recommendations, in the upstream's order. */
export const recommendationOptionId = (index: number) => `r${index + 1}`;
/** Recommendations as options; the platform marks none, so `auto` takes them all. */
export function recommendationOptions(recommend: unknown[]): SelectionOption[] {
  return recommend.map((item, index) => ({
    id: recommendationOptionId(index),
    label: shorten(plainText(item), 200) || `recommendation ${index + 1}`,
    preselected: false,
  }));
}

/** The recommendations whose options were chosen, echoed back as the upstream gave them. */
export function chosenRecommendations(recommend: unknown[], picked: ReadonlySet<string>): unknown[] {
  return recommend.filter((_, index) => picked.has(recommendationOptionId(index)));
}
