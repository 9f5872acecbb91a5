/**
 * The FTO report, in the order the person deciding on a launch reads it: the recommendation and the
 * risk per market, then each patent's risk, office, legal status and family reach, then a claim
 * chart per independent claim (each element against the product), the features compared and the
 * platform's report document. Scores are on one scale, 0–100.
 */
import type { ReportInput } from '../../engine/workflow';
import {
  blocks,
  count,
  fileLink,
  heading,
  inline,
  score,
  shorten,
  table,
  webLink,
} from '../../reports/markdown';
import { attachmentPath, outputOf } from '../common/step-data';
import { documentLink, publicScore } from '../novelty-check/report';
import { analyseFto, type FtoAnalysis, type PatentRisk } from './analysis';
import type { FtoInput } from './input';

const MATCH_MARK = {
  identical: '● identical',
  equivalent: '◐ equivalent',
  different: '○ different',
  unknown: '—',
};
const STATUS_WORDS: Record<string, string> = { active: 'active', pending: 'pending', inactive: 'inactive' };

function scopeLine(input: FtoInput, analysis: FtoAnalysis, found: number | null | undefined): string {
  const markets = input.markets?.length
    ? input.markets.join(', ')
    : 'every office the platform searches (none named)';
  const dates =
    input.apdStart || input.apdEnd
      ? `applied for ${input.apdStart ? `from ${input.apdStart}` : ''}${input.apdStart && input.apdEnd ? ' ' : ''}${input.apdEnd ? `up to ${input.apdEnd}` : ''}`
      : 'any application date';
  const statuses = input.legalStatus.map((name) => STATUS_WORDS[name]).join(' or ');
  const compared =
    found !== null && found !== undefined
      ? `${count(found)} potentially relevant patents found, ${analysis.patents.length} compared claim by claim`
      : `${analysis.patents.length} ${analysis.patents.length === 1 ? 'patent' : 'patents'} compared claim by claim`;
  const named = analysis.patents.filter((patent) => patent.added).length;
  const added = named > 0 ? ` (${named} of them named for comparison)` : '';
  return `Searched: markets ${markets}; patents ${statuses}; ${dates}; ${compared}${added}.`;
}

/** The high and medium risk patents by name, the low ones by count. */
function reachLine(patents: PatentRisk[]): string {
  if (patents.length === 0) return '—';
  const named = patents
    .filter((patent) => patent.risk !== 'Low')
    .map((patent) => `${patent.label} ${patent.number ?? patent.id} (${patent.risk})`);
  const low = patents.length - named.length;
  return [...named, ...(low > 0 ? [`${low} low-risk`] : [])].join(', ');
}

function marketsTable(analysis: FtoAnalysis): string {
  const rows = analysis.markets.map((market) => [
    market.market,
    market.risk === 'None' ? 'none found' : market.risk,
    reachLine(market.patents),
  ]);
  return blocks(
    table(
      ['Market', 'Risk', 'Patents that reach it'],
      rows,
      '_No market to show: no patent with a known office was found._',
    ),
    inline(
      `A patent reaches a market when it was filed there or its family has a member there${
        analysis.familyNote ? ' (here only its own office: family data is missing)' : ''
      }. Lapsed (inactive) patents are left out. ${analysis.named ? '' : 'No markets were named, so the offices of the patents found are shown.'}`,
    ),
  ).trimEnd();
}

const readsLine = (patent: PatentRisk) => {
  const read = patent.claims.filter((claim) => claim.reads).map((claim) => claim.number);
  return read.length > 0 ? `claim ${read.join(', ')}` : 'none';
};

function patentsTable(analysis: FtoAnalysis): string {
  const rows = analysis.patents.map((patent) => {
    const link = documentLink(patent.number);
    return [
      patent.label,
      link ? webLink(patent.number, link) : (patent.number ?? patent.id),
      shorten(patent.title, 100) || '—',
      patent.office ?? '—',
      patent.legalStatus ?? '—',
      `${patent.risk}${patent.lapsed ? ' (lapsed)' : ''}${patent.added ? ' (named; from the scores)' : ''}`,
      readsLine(patent),
      patent.family ? patent.family.join(', ') : '—',
      score(publicScore(patent.score)),
    ];
  });
  return blocks(
    analysis.legalStatusNote,
    analysis.familyNote,
    notComparedNote(analysis),
    table(
      [
        'Ref',
        'Patent',
        'Title',
        'Office',
        'Legal status',
        'Risk',
        'Independent claims that read',
        'Family in',
        'Score (0–100)',
      ],
      rows,
      '_No patent found._',
    ),
    analysis.patents.length > 0
      ? inline(
          'Risk is the platform’s: High when an independent claim reads on the product element by element, Medium when some elements do, Low when none does. Score: the platform’s overall similarity.',
        )
      : undefined,
    // Static text, not escaped: its field name renders as code.
    analysis.patents.some((patent) => patent.added)
      ? 'A patent marked “named” was not found by the search but named for comparison (`comparePatents`): the platform compares its elements with scores only, so an element matches when its score reaches the platform’s threshold, and its risk follows from how many match.'
      : undefined,
  ).trimEnd();
}

/** Which patents named for comparison could not be compared, and why. */
function notComparedNote(analysis: FtoAnalysis): string | undefined {
  if (analysis.notCompared.length === 0) return undefined;
  const rest = analysis.patents.length > 0 ? ' The rest of the search is complete.' : '';
  return `**Not compared:** ${analysis.notCompared
    .map(({ number, why }) => `${inline(number)} (the comparison, ai66-8, failed: ${inline(why)})`)
    .join('; ')}.${rest}`;
}

function claimChart(patent: PatentRisk): string {
  const facts = [
    patent.added ? 'named for comparison (not found by the search)' : undefined,
    `${patent.risk} risk`,
    patent.legalStatus ? `legal status ${patent.legalStatus}` : 'legal status not known',
    patent.office ? `office ${patent.office}` : undefined,
    patent.family ? `family in ${patent.family.join(', ')}` : undefined,
    patent.dependentRead.length > 0
      ? `dependent claims that read too: ${patent.dependentRead.join(', ')}`
      : undefined,
  ].filter((fact): fact is string => fact !== undefined);
  const charts = patent.claims.map((claim) =>
    blocks(
      heading(
        4,
        `Claim ${claim.number} (independent): ${claim.reads ? 'reads on the product' : 'does not read'}`,
      ),
      claim.text ? `> ${inline(shorten(claim.text, 1200))}` : undefined,
      table(
        ['#', 'Claim element', 'In the product', 'Match', 'Score'],
        claim.rows.map((row, index) => [
          index + 1,
          row.element,
          row.product || '—',
          MATCH_MARK[row.match],
          row.score ?? '—',
        ]),
        '_The platform compared no element of this claim._',
      ),
    ).trimEnd(),
  );
  return blocks(
    heading(
      3,
      `${patent.label} · ${patent.number ?? patent.id}${patent.title ? ` · ${shorten(patent.title, 100)}` : ''}`,
    ),
    inline(facts.join(' · ')),
    patent.conclusion ? `> ${inline(patent.conclusion)}` : undefined,
    ...(charts.length > 0 ? charts : ['_The platform gave no claim comparison for this patent._']),
  ).trimEnd();
}

/** Why there is no platform report: it takes 1 to 5 patents, and a search that found none leaves none. */
function noDocumentLine(analysis: FtoAnalysis, found: number): string {
  if (found > 0 || analysis.patents.length > 0) return '_No document was downloaded._';
  const uncompared = analysis.notCompared.length;
  return `_The platform’s report was not asked for: it takes 1 to 5 patents, and the search found none${
    uncompared > 0
      ? ` and none of the ${uncompared} named for comparison could be compared (see Patents)`
      : ''
  }._`;
}

/** The report of a finished FTO job. */
export function ftoReportMarkdown(r: ReportInput<FtoInput>, title: string): string {
  const { input, outputs, context, job, attachments } = r;
  const analysis = analyseFto(outputs, context, input);
  const result = outputOf(outputs, 'agent-result', 'ai66-5AgentResult');
  const features = outputOf(outputs, 'features', 'ai66-2FeatureExtract')?.features ?? [];
  const chosen = new Set(r.selections['features'] ?? []);
  // The report's patents were chosen as `p1`, `p2`... in the order the search gave them.
  const found = (result?.final_result ?? []).filter((patent) => patent?.patent_id);
  const forReport = [
    ...(r.selections['agent-result'] ?? [])
      .map((id) => found[Number(id.slice(1)) - 1]?.patent_id)
      .map((id) => analysis.patents.find((patent) => !patent.added && patent.id === id?.trim()))
      .filter((patent): patent is PatentRisk => patent !== undefined),
    ...analysis.patents.filter((patent) => patent.added),
  ];
  const documents = attachments.map(
    (attachment) => `- ${fileLink(attachment.fileName, attachmentPath(job.id, attachment))}`,
  );
  return blocks(
    heading(1, title),
    heading(2, 'Recommendation'),
    `**${inline(analysis.recommendation)}**`,
    inline(scopeLine(input, analysis, result?.find_patent_num)),
    heading(2, 'Risk by market'),
    marketsTable(analysis),
    heading(2, 'Patents'),
    patentsTable(analysis),
    heading(2, 'Claim charts'),
    inline(
      'One chart per independent claim: each element of the claim against the product. A claim reads on the product when every element is found in it, identically or by an equivalent.',
    ),
    ...analysis.patents.map(claimChart),
    heading(2, 'Features compared'),
    table(
      ['Id', 'Feature of the product', 'Score', 'Compared'],
      features.map((feature, index) => [
        `f${index + 1}`,
        feature?.tech_feature,
        feature?.score ?? '—',
        chosen.has(`f${index + 1}`) ? 'yes' : 'no',
      ]),
      '_The platform extracted no features._',
    ),
    heading(2, 'Report document'),
    forReport.length > 0
      ? inline(
          `The platform’s report analyses ${forReport
            .map((patent) => `${patent.label} ${patent.number ?? patent.id}`)
            .join(', ')} (it takes 1 to 5 patents).`,
        )
      : undefined,
    documents.length > 0 ? documents.join('\n') : noDocumentLine(analysis, found.length),
  );
}
