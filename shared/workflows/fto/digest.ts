/**
 * What a scheduled FTO search is compared by with its previous run (a patent that appears, lapses
 * or changes risk), and its key findings in a batch's summary.csv.
 */
import type { BatchFindings, ReportInput, WorkflowDigest } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { uniqueEntries } from '../common/digest';
import { publicScore } from '../novelty-check/report';
import { analyseFto } from './analysis';
import type { FtoInput } from './input';

/** The patents found, by id, with their risk, legal status and title. */
export function ftoDigest(r: ReportInput<FtoInput>): WorkflowDigest {
  const { patents, markets } = analyseFto(r.outputs, r.context, r.input);
  return {
    lists: [
      {
        kind: 'patents',
        entries: uniqueEntries(
          patents.map((patent) => ({
            id: patent.id,
            text: [
              patent.number ?? patent.id,
              `${patent.risk} risk`,
              patent.legalStatus,
              shorten(patent.title, 120) || undefined,
            ]
              .filter(Boolean)
              .join(' · '),
          })),
        ),
      },
      {
        kind: 'markets',
        entries: markets.map((market) => ({
          id: market.market,
          text: `${market.market}: ${market.risk} risk`,
        })),
      },
    ],
  };
}

type Found = { patent_id?: string; public_score?: number; risk_level?: string; feature_match_num?: number };
const RANK: Record<string, number> = { high: 0, medium: 1, low: 2 };

/** How many patents, and the riskiest (then closest) one with its score and matched elements. */
export function ftoFindings(steps: Record<string, unknown>): BatchFindings {
  const patents = ((steps['agent-result'] as { final_result?: unknown } | undefined)?.final_result ??
    []) as Found[];
  const worst = [...patents].sort(
    (a, b) =>
      (RANK[(a.risk_level ?? '').toLowerCase()] ?? 3) - (RANK[(b.risk_level ?? '').toLowerCase()] ?? 3) ||
      (b.public_score ?? -1) - (a.public_score ?? -1),
  )[0];
  if (!worst) return { references: '0' };
  const score = publicScore(worst.public_score);
  return {
    references: String(patents.length),
    closest: `${worst.patent_id ?? ''}${worst.risk_level ? ` (${worst.risk_level} risk)` : ''}`,
    closestScore: score === undefined ? '' : String(score),
    featuresMatched: worst.feature_match_num === undefined ? '' : String(worst.feature_match_num),
  };
}
