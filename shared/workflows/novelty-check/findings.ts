/** A finished novelty check's key findings in a batch's summary.csv: its references and the closest one. */
import type { BatchFindings } from '../../engine/workflow';
import { publicScore } from './report';

/** How many references, and the closest (the one marked most similar, else the best scored). */
export function noveltyFindings(steps: Record<string, unknown>): BatchFindings {
  const findings: BatchFindings = {};
  const references =
    ((steps['agent-result'] as { final_result?: unknown } | undefined)?.final_result as
      | { patent_id?: string; public_score?: number; feature_match_num?: number; most_similar?: boolean }[]
      | undefined) ?? [];
  findings.references = String(references.length);
  const closest =
    references.find((reference) => reference.most_similar === true) ??
    [...references].sort((a, b) => (b.public_score ?? -1) - (a.public_score ?? -1))[0];
  if (closest) {
    findings.closest = closest.patent_id ?? '';
    // On the report's scale, 0–100 (the platform gives 0–1).
    const score = publicScore(closest.public_score);
    findings.closestScore = score === undefined ? '' : String(score);
    findings.featuresMatched =
      closest.feature_match_num === undefined ? '' : String(closest.feature_match_num);
  }
  return findings;
}
