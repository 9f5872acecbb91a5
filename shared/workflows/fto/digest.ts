/**
 * What a scheduled FTO search is compared by with its previous run (a patent that appears, lapses
 * or changes risk), and its key findings in a batch's summary.csv.
 */
import type { BatchFindings, FindingsSource, ReportInput, WorkflowDigest } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { uniqueEntries } from '../common/digest';
import { publicScore } from '../novelty-check/report';
import { analyseFto, type PatentRisk } from './analysis';
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

/**
 * How many patents, the riskiest live one (then the closest) with its score and matched elements,
 * the recommendation, and a row per patent: its risk, office, legal status, reach and claims that read.
 */
export function ftoFindings({ steps, input, context }: FindingsSource): BatchFindings {
  const { patents, recommendation } = analyseFto(steps, context ?? {}, (input ?? {}) as FtoInput);
  const worst = patents.find((patent) => !patent.lapsed) ?? patents[0];
  if (!worst) return { references: '0', verdict: recommendation, detail: [] };
  const score = publicScore(worst.score);
  const reads = (patent: PatentRisk) =>
    patent.claims
      .filter((claim) => claim.reads)
      .map((claim) => claim.number)
      .join(', ');
  return {
    references: String(patents.length),
    closest: `${worst.number ?? worst.id} (${worst.risk} risk)`,
    closestScore: score === undefined ? '' : String(score),
    featuresMatched: worst.raw.feature_match_num == null ? '' : String(worst.raw.feature_match_num),
    verdict: recommendation,
    closestReferences: patents
      .filter((patent) => !patent.lapsed)
      .slice(0, 3)
      .map((patent) => `${patent.number ?? patent.id} (${patent.risk})`),
    detail: patents.map((patent) => ({
      Patent: patent.label,
      Number: patent.number ?? patent.id,
      Title: shorten(patent.title, 160),
      Risk: patent.risk,
      Office: patent.office ?? '',
      'Legal status': patent.legalStatus ?? '',
      Lapsed: patent.lapsed ? 'yes' : 'no',
      Family: (patent.family ?? []).join(', '),
      'Independent claims that read': reads(patent),
      'Score (0-100)': publicScore(patent.score) ?? '',
      Conclusion: shorten(patent.conclusion, 300),
    })),
  };
}
