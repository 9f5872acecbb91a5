/**
 * The patents a person named for comparison (`comparePatents`): each compared by ai66-8 ("add a
 * comparison document or patent"), whose answer is the comparison only (elements and scores, no
 * match type, risk or conclusion). Read here in the shape of ai66-5's patents, so the report's
 * claim charts and the platform's report (ai66-6, as `user_added`) take them as they take the found
 * ones: an element matches when its score reaches the platform's threshold, and the risk follows
 * from how many elements match (every one: High; some: Medium; none: Low).
 */
import type { DataOf } from '../../openplatform/schemas/responses';
import { outputOf, withoutNulls } from '../common/step-data';
import { comparePatentLimit } from './input';

type FoundPatent = NonNullable<DataOf<'ai66-5AgentResult'>['final_result']>[number];
type Compared = NonNullable<DataOf<'ai66-8FeatureComparison'>['final_res']>[number];

/** The step that compares the `index`-th patent named (persisted in job records: never renamed). */
export const compareStepName = (index: number) => `compare-patent-${index + 1}`;

/** The threshold the platform answers when it gives none (the score from which an element matches). */
const defaultThreshold = 60;

/** A compared patent in the shape of ai66-5's, marked as added (`user_added`), with its derived risk. */
export function addedPatent(compared: Compared, threshold: number, number: string): FoundPatent {
  const clean = withoutNulls(compared) ?? {};
  const features = (clean.features ?? []).map((feature) => ({
    ...feature,
    claim_type: 'independent',
    similar: (feature.score ?? 0) >= threshold,
  }));
  const matched = features.filter((feature) => feature.similar).length;
  const risk = features.length > 0 && matched === features.length ? 'High' : matched > 0 ? 'Medium' : 'Low';
  return {
    ...clean,
    patent_id: clean.patent_id?.trim() || number,
    features,
    feature_match_num: matched,
    risk_level: risk,
    user_added: true,
  } as FoundPatent;
}

/** The patents compared at the person's request, in the order named (those whose call failed left out). */
export function addedPatents(
  outputs: Record<string, unknown>,
  named: readonly string[] | undefined,
): FoundPatent[] {
  const added: FoundPatent[] = [];
  for (let index = 0; index < comparePatentLimit; index++) {
    const data = outputOf(outputs, compareStepName(index), 'ai66-8FeatureComparison');
    const compared = data?.final_res?.find((patent) => patent?.patent_id || patent?.features?.length);
    if (compared) {
      const number = named?.[index] ?? compared.patent_id ?? `added ${index + 1}`;
      added.push(addedPatent(compared, data?.threshold ?? defaultThreshold, number));
    }
  }
  return added;
}

/** Whether a patent of the analysis was added by the person (ai66-8), not found by the search. */
export const isAdded = (patent: { user_added?: unknown }) => patent.user_added === true;
