/**
 * The design infringement search's report, for a person deciding whether a product can ship: the
 * risk conclusion first (the highest risk, where, and how many designs weigh on it), then the
 * closest registered designs reviewed by the platform (similarity, jurisdiction, legal status, risk,
 * links), what each has in common with the product and how to design around it, then the image
 * search's other hits, and last what was searched and how. Similarity is shown on one scale, a
 * percentage, whatever scale the platform answered in.
 */
import type { BatchFindings, FindingsSource, ReportInput, WorkflowDigest } from '../../engine/workflow';
import type { DataOf } from '../../openplatform/schemas/responses';
import { blocks, bullets, count, heading, inline, shorten, table, webLink } from '../../reports/markdown';
import { imageMarkdown } from '../../reports/report-images';
import { uniqueEntries } from '../common/digest';
import { outputOf } from '../common/step-data';
import { imageDescription, imageLabel } from './images';
import { type DesignSearchInput, imageOutput } from './input';

export type Risk = 'High' | 'Medium' | 'Low';
const riskOrder: Record<Risk, number> = { High: 0, Medium: 1, Low: 2 };

/** A similarity as a whole percentage: the platform answers 0 to 1 in ai39 and 0 to 100 in ai67. */
export function similarityPercent(score: number | null | undefined): number | undefined {
  if (typeof score !== 'number' || !Number.isFinite(score)) return undefined;
  return Math.round(score > 1 ? score : score * 100);
}

/** The platform's legal status codes (1 valid, 2 invalid, 3 pending). */
export function legalStatusText(status: number | null | undefined): string {
  return status === 1 ? 'Valid' : status === 2 ? 'Invalid' : status === 3 ? 'Pending' : 'Unknown';
}

/** High, Medium or Low from the platform's word; a missing one is read from the similarity. */
export function riskOf(level: string | null | undefined, percent: number | undefined): Risk {
  const word = (level ?? '').trim().toLowerCase();
  if (word.startsWith('high') || word === '高') return 'High';
  if (word.startsWith('mid') || word.startsWith('medium') || word === '中') return 'Medium';
  if (word.startsWith('low') || word === '低') return 'Low';
  return percent === undefined ? 'Low' : percent >= 80 ? 'High' : percent >= 60 ? 'Medium' : 'Low';
}

/** An Espacenet search for a publication number (a design's too). */
export const espacenetLink = (pn: string) =>
  `https://worldwide.espacenet.com/patent/search?q=pn%3D${encodeURIComponent(pn)}`;

export interface ReviewedDesign {
  pn: string;
  title: string;
  country: string;
  status: string;
  /** Invalid designs do not weigh on the risk. */
  inForce: boolean;
  percent: number | undefined;
  risk: Risk;
  image: string | undefined;
  similar: string;
  difference: string;
  confusion: string;
  riskText: string;
  suggestion: string;
  /** The product image it was found from. */
  from: string;
}

export interface DesignSearchAnalysis {
  designs: ReviewedDesign[];
  hits: (NonNullable<
    NonNullable<DataOf<'ai39-2ImageSearchReport'>['patent_messages']>['patent_messages']
  >[number] & {
    from: string;
  })[];
  highCountries: string[];
  middleCountries: string[];
  /** The highest risk of a design in force, or undefined when no design was reviewed. */
  risk: Risk | undefined;
  total: number;
  lineDrawings: string[];
}

/** Every image's review and hits, the designs sorted by risk then similarity. */
export function analyseDesignSearch(
  outputs: Record<string, unknown>,
  input: Pick<DesignSearchInput, 'images'>,
): DesignSearchAnalysis {
  const designs: ReviewedDesign[] = [];
  const hits: DesignSearchAnalysis['hits'] = [];
  const high = new Set<string>();
  const middle = new Set<string>();
  const lineDrawings: string[] = [];
  let total = 0;
  input.images.forEach((image, index) => {
    const data = outputOf(outputs, imageOutput(index, 'result'), 'ai39-2ImageSearchReport');
    if (!data) return;
    const from = imageLabel(image, index);
    const found = data.patent_messages?.patent_messages ?? data.rrffusion_response?.patent_messages ?? [];
    const imageOf = new Map(
      found.map((hit) => [hit?.patent_pn ?? '', hit?.url ?? hit?.url_120 ?? undefined]),
    );
    for (const hit of found) if (hit) hits.push({ ...hit, from });
    total += data.patent_messages?.total_search_result_count ?? found.length;
    if (data.line_drawing_base64) lineDrawings.push(data.line_drawing_base64);
    for (const country of data.report?.high_risk_country ?? []) if (country) high.add(country);
    for (const country of data.report?.middle_risk_country ?? []) if (country) middle.add(country);
    for (const comparison of data.report?.comparisons ?? []) {
      if (!comparison) continue;
      const percent = similarityPercent(comparison.score);
      const pn = comparison.patent_pn ?? comparison.patent_id ?? '?';
      designs.push({
        pn,
        title: comparison.title ?? '',
        country: comparison.country ?? '',
        status: legalStatusText(comparison.status),
        inForce: comparison.status !== 2,
        percent,
        risk: riskOf(comparison.risk_level, percent),
        image: imageOf.get(pn) ?? undefined,
        similar: comparison.similar ?? '',
        difference: comparison.difference ?? '',
        confusion: comparison.confusion ?? '',
        riskText: comparison.risk_desc ?? '',
        suggestion: comparison.suggestion ?? '',
        from,
      });
    }
  });
  designs.sort((a, b) => riskOrder[a.risk] - riskOrder[b.risk] || (b.percent ?? 0) - (a.percent ?? 0));
  const weighing = designs.filter((design) => design.inForce);
  return {
    designs,
    hits,
    highCountries: [...high],
    middleCountries: [...middle].filter((country) => !high.has(country)),
    risk: weighing[0]?.risk ?? (designs.length > 0 ? 'Low' : undefined),
    total,
    lineDrawings,
  };
}

/** The conclusion in one sentence, as the summary, the findings and the report's first line say it. */
export function designSearchConclusion(analysis: DesignSearchAnalysis): string {
  const { risk, designs, highCountries, middleCountries } = analysis;
  if (risk === undefined) return 'No registered design was reviewed: no conclusion.';
  const weighing = designs.filter((design) => design.inForce && design.risk === risk);
  const where = (countries: string[]) => (countries.length > 0 ? ` in ${countries.join(', ')}` : '');
  if (risk === 'High')
    return `High risk${where(highCountries)}: ${weighing.length} registered ${weighing.length === 1 ? 'design is' : 'designs are'} close enough to be confused with the product. Redesign or clear them before launch there.`;
  if (risk === 'Medium')
    return `Medium risk${where(middleCountries)}: ${weighing.length} registered ${weighing.length === 1 ? 'design shares' : 'designs share'} dominant features with the product. Have them reviewed before launch there.`;
  return `Low risk: none of the ${designs.length} closest registered designs leaves the same overall impression as the product.`;
}

/** "High risk (US, EU): 2 of 6 reviewed designs, closest USD1234567S1 92%". */
export function designSearchSummary(r: ReportInput<DesignSearchInput>): string {
  const analysis = analyseDesignSearch(r.outputs, r.input);
  const top = analysis.designs[0];
  if (!analysis.risk || !top) return 'no registered design reviewed';
  const countries = analysis.risk === 'High' ? analysis.highCountries : analysis.middleCountries;
  const atRisk = analysis.designs.filter((design) => design.inForce && design.risk !== 'Low').length;
  return `${analysis.risk} risk${analysis.risk !== 'Low' && countries.length > 0 ? ` (${countries.join(', ')})` : ''}: ${atRisk} of ${analysis.designs.length} reviewed designs at risk, closest ${top.pn} ${top.percent ?? '?'}%`;
}

const percentText = (percent: number | undefined) => (percent === undefined ? '—' : `${percent}%`);

function designsTable(designs: ReviewedDesign[], manyImages: boolean): string {
  return table(
    [
      '#',
      'Design',
      'Title',
      'Jurisdiction',
      'Legal status',
      'Similarity',
      'Risk',
      'Image',
      ...(manyImages ? ['Found from'] : []),
    ],
    designs.map((design, index) => [
      index + 1,
      webLink(design.pn, espacenetLink(design.pn)),
      shorten(design.title, 80),
      design.country,
      design.status,
      percentText(design.percent),
      design.inForce ? design.risk : `${design.risk} (not in force)`,
      design.image ? webLink('view', design.image) : '—',
      ...(manyImages ? [design.from] : []),
    ]),
    '_The platform reviewed no registered design._',
  );
}

/** The platform's review of one design (or one view): what it shares, differences, confusion, risk, design-around. */
export function reviewBullets(
  review: Pick<ReviewedDesign, 'similar' | 'difference' | 'confusion' | 'riskText' | 'suggestion'>,
): string {
  return bullets([
    `In common: ${review.similar || '—'}`,
    `Differences: ${review.difference || '—'}`,
    `Confusion: ${review.confusion || '—'}`,
    `Risk: ${review.riskText || '—'}`,
    `Design-around: ${review.suggestion || '—'}`,
  ]);
}

function designDetail(design: ReviewedDesign, index: number): string {
  return blocks(
    heading(
      3,
      `${index + 1}. ${design.pn}: ${shorten(design.title, 80)} (${design.risk} risk, ${percentText(design.percent)}${design.inForce ? '' : ', not in force'})`,
    ),
    reviewBullets(design),
  );
}

/**
 * Each product image beside the platform's line drawing of it, as searched: an image given as data
 * is shown, one given by URL is linked (a report fetches nothing from elsewhere).
 */
function productImages(r: ReportInput<DesignSearchInput>): string {
  return table(
    ['Image', 'As searched', 'Line drawing (the platform’s)'],
    r.input.images.map((image, index) => {
      const label = imageLabel(image, index);
      const drawing = outputOf(
        r.outputs,
        imageOutput(index, 'result'),
        'ai39-2ImageSearchReport',
      )?.line_drawing_base64;
      return [
        label,
        (image.data !== undefined && imageMarkdown(label, image.data)) ||
          (image.url ? webLink('by URL', image.url) : '—'),
        (drawing && imageMarkdown(`Line drawing of ${label}`, drawing)) || '—',
      ];
    }),
  );
}

export function designSearchMarkdown(r: ReportInput<DesignSearchInput>, title: string): string {
  const { input } = r;
  const analysis = analyseDesignSearch(r.outputs, input);
  const many = input.images.length > 1;
  const reviewed = new Set(analysis.designs.map((design) => design.pn));
  const others = analysis.hits.filter((hit) => !reviewed.has(hit.patent_pn ?? ''));
  return blocks(
    heading(1, title),
    heading(2, 'Risk conclusion'),
    inline(designSearchConclusion(analysis)),
    table(
      ['Risk', 'Countries'],
      [
        ['High', analysis.highCountries.join(', ') || '—'],
        ['Medium', analysis.middleCountries.join(', ') || '—'],
      ],
    ),
    heading(2, 'Closest registered designs'),
    designsTable(analysis.designs, many),
    inline(
      'Similarity is the platform’s, as a percentage. A design not in force (invalid) is listed but does not weigh on the risk; a pending one does.',
    ),
    ...analysis.designs.map(designDetail),
    heading(2, 'Other designs the image search found'),
    table(
      [
        'Design',
        'Title',
        'Office',
        'Similarity',
        'Filed',
        'Owner',
        'Locarno',
        ...(many ? ['Found from'] : []),
      ],
      others
        .slice(0, 30)
        .map((hit) => [
          webLink(hit.patent_pn ?? hit.patent_id ?? '?', espacenetLink(hit.patent_pn ?? '')),
          shorten(hit.title, 60),
          hit.authority ?? '',
          percentText(similarityPercent(hit.score)),
          dateText(hit.apdt),
          shorten(hit.current_assignee ?? hit.original_assignee ?? '', 50),
          (hit.loc ?? []).join(', '),
          ...(many ? [hit.from] : []),
        ]),
      '_No other design was found._',
    ),
    inline(
      `${count(analysis.total)} designs matched the images in all; the ${Math.min(others.length, 30)} closest of those not reviewed are listed.`,
    ),
    heading(2, 'The product’s images'),
    productImages(r),
    heading(2, 'What was searched'),
    bullets([
      `Images: ${input.images.map((image, index) => imageDescription(image, index)).join('; ')}`,
      `Offices: ${input.countries.join(', ')}`,
      `Locarno classes: ${input.locarno?.join(', ') || 'any'}`,
      `Field: ${input.field ?? 'not given'}`,
      `Designs filed from: ${input.filedFrom ?? 'any date'}`,
      `Report language: ${input.lang}`,
    ]),
  );
}

/** yyyyMMdd → YYYY-MM-DD. */
function dateText(value: number | null | undefined): string {
  const text = value == null ? '' : String(value);
  return /^\d{8}$/.test(text) ? `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6)}` : '—';
}

/** The reviewed designs by number (a design that appears, lapses or changes risk shows), and the countries at risk. */
export function designSearchDigest(r: ReportInput<DesignSearchInput>): WorkflowDigest {
  const analysis = analyseDesignSearch(r.outputs, r.input);
  return {
    lists: [
      {
        kind: 'designs',
        entries: uniqueEntries(
          analysis.designs.map((design) => ({
            id: design.pn,
            text: `${design.pn} · ${design.risk} risk · ${design.status} · ${design.country} · ${percentText(design.percent)}`,
          })),
        ),
      },
      {
        kind: 'countries',
        entries: [
          ...analysis.highCountries.map((country) => ({ id: country, text: `${country}: High risk` })),
          ...analysis.middleCountries.map((country) => ({ id: country, text: `${country}: Medium risk` })),
        ],
      },
    ],
    counts: [{ name: 'designs found', value: analysis.total }],
  };
}

/** How many designs were reviewed, the riskiest, the conclusion, and a row per reviewed design. */
export function designSearchFindings({ steps, input }: FindingsSource): BatchFindings {
  const images = (input as Partial<DesignSearchInput> | undefined)?.images ?? [];
  const analysis = analyseDesignSearch(steps, { images });
  const top = analysis.designs[0];
  return {
    references: String(analysis.designs.length),
    ...(top ? { closest: `${top.pn} (${top.risk} risk)`, closestScore: percentText(top.percent) } : {}),
    verdict: designSearchConclusion(analysis),
    closestReferences: analysis.designs.slice(0, 3).map((design) => `${design.pn} (${design.risk})`),
    detail: analysis.designs.map((design) => ({
      Design: design.pn,
      Title: shorten(design.title, 160),
      Jurisdiction: design.country,
      'Legal status': design.status,
      'Similarity (%)': design.percent ?? '',
      Risk: design.risk,
      'Found from': design.from,
      Suggestion: shorten(design.suggestion, 300),
    })),
  };
}
