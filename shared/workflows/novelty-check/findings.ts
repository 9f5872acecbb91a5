/**
 * A finished novelty check's key findings for a batch's summary.csv and workbook: the verdict, the
 * prior-art references by citation category, the closest ones, and a row per reference (with its
 * legal status and family when the job fetched them). Worked out
 * by the report's own analysis, so a reference published after the cut-off is never the closest.
 */
import type { BatchFindings, FindingsSource } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { familyText } from '../common/patent-status';
import {
  bibliographiesOf,
  type NoveltyReportInput,
  noveltyAnalysisOf,
  publicScore,
  referenceStatusesOf,
} from './report';

/** The closest references named in a batch's outputs. */
const closestShown = 3;

export function noveltyFindings({ steps, input, selections }: FindingsSource): BatchFindings {
  const analysis = noveltyAnalysisOf(
    { outputs: steps, selections: selections ?? {} },
    (input ?? {}) as Pick<NoveltyReportInput, 'pbdEnd' | 'priorityDate'>,
  );
  const { references, late, conclusion } = analysis;
  const findings: BatchFindings = {
    references: String(references.length),
    verdict: conclusion.verdict,
    categories: {
      X: references.filter((reference) => reference.category === 'X').length,
      Y: references.filter((reference) => reference.category === 'Y').length,
      A: references.filter((reference) => reference.category === 'A').length,
    },
  };
  const rank = { X: 0, Y: 1, A: 2 } as const;
  const ordered = [...references].sort(
    (a, b) => rank[a.category] - rank[b.category] || b.disclosed.length - a.disclosed.length,
  );
  const closest = conclusion.closest ?? ordered[0];
  if (closest) {
    findings.closest = closest.id;
    // On the report's scale, 0–100 (the platform gives 0–1).
    const score = publicScore(closest.reference.public_score);
    findings.closestScore = score === undefined ? '' : String(score);
    findings.featuresMatched =
      closest.reference.feature_match_num === undefined ? '' : String(closest.reference.feature_match_num);
    findings.closestReferences = [closest, ...ordered.filter((reference) => reference !== closest)]
      .slice(0, closestShown)
      .map((reference) => `${reference.id} (${reference.category})`);
  }
  const bibliographies = bibliographiesOf(steps);
  const statusOf = referenceStatusesOf(steps, bibliographies);
  const row = (reference: (typeof references)[number], priorArt: boolean) => {
    const bibliography = bibliographies.get(reference.id);
    const status = statusOf(reference);
    const score = publicScore(reference.reference.public_score);
    return {
      Reference: reference.label,
      'Publication number': bibliography?.publicationNumber ?? reference.id,
      Title: bibliography?.title ?? shorten(reference.reference.document, 160),
      Category: priorArt ? reference.category : 'after cut-off',
      'Score (0-100)': score ?? '',
      'Features disclosed': reference.disclosed.length,
      'Features similar': reference.similar.length,
      Claims: reference.claims.join(', '),
      Published: bibliography?.publicationDate ?? '',
      Assignee: bibliography?.assignee ?? '',
      'Legal status': status.legalStatus ?? '',
      Family: familyText(status.family) ?? '',
    };
  };
  findings.detail = [
    ...references.map((reference) => row(reference, true)),
    ...late.map((reference) => row(reference, false)),
  ];
  return findings;
}
