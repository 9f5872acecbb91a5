/**
 * The design 1v1's report, for a person asking "does my product infringe this design?": the
 * conclusion first (the highest risk of any view and where), then the comparison view by view
 * (similarity, risk, the design's image), what each view shares and how it differs, whether an
 * informed user would confuse them and how to design around it, and last what was compared.
 */
import type { BatchFindings, FindingsSource, ReportInput, WorkflowDigest } from '../../engine/workflow';
import { blocks, bullets, heading, inline, shorten, table, webLink } from '../../reports/markdown';
import { imageMarkdown } from '../../reports/report-images';
import { outputOf } from '../common/step-data';
import { imageDescription, imageLabel } from '../design-infringement-search/images';
import {
  espacenetLink,
  legalStatusText,
  type Risk,
  reviewBullets,
  riskOf,
  similarityPercent,
} from '../design-infringement-search/report';
import type { Design1v1Input } from './input';

const riskOrder: Record<Risk, number> = { High: 0, Medium: 1, Low: 2 };

export interface ViewComparison {
  view: number;
  percent: number | undefined;
  risk: Risk;
  image: string | undefined;
  status: string;
  country: string;
  title: string;
  similar: string;
  difference: string;
  confusion: string;
  riskText: string;
  suggestion: string;
}

/** The comparison view by view (in the platform's order), and the highest risk. */
export function analyse1v1(outputs: Record<string, unknown>) {
  const data = outputOf(outputs, 'comparison', 'ai67-2AiInfringementDetection1v1Query');
  const views: ViewComparison[] = (data?.comparisons ?? []).flatMap((item, index) => {
    if (!item) return [];
    const percent = similarityPercent(item.score);
    return [
      {
        view: index + 1,
        percent,
        risk: riskOf(item.risk_level, percent),
        image: item.patent_image_url ?? undefined,
        status: legalStatusText(item.status),
        country: item.country ?? '',
        title: item.title ?? '',
        similar: item.similar ?? '',
        difference: item.difference ?? '',
        confusion: item.confusion ?? '',
        riskText: item.risk_desc ?? '',
        suggestion: item.suggestion ?? '',
      },
    ];
  });
  const worst = [...views].sort(
    (a, b) => riskOrder[a.risk] - riskOrder[b.risk] || (b.percent ?? 0) - (a.percent ?? 0),
  )[0];
  return {
    views,
    worst,
    suspected: (data?.suspected_infringement_count ?? 0) > 0,
    countries: [...(data?.high_risk_country ?? []), ...(data?.middle_risk_country ?? [])].filter(
      (country): country is string => Boolean(country),
    ),
  };
}

/** The conclusion in one sentence. */
export function design1v1Conclusion(patent: string, analysis: ReturnType<typeof analyse1v1>): string {
  const { worst, views, countries } = analysis;
  if (!worst) return `No view of ${patent} was compared: no conclusion.`;
  const where = countries.length > 0 ? ` in ${countries.join(', ')}` : '';
  const atRisk = views.filter((view) => view.risk === worst.risk).length;
  const of = `${atRisk} of ${views.length} views`;
  if (worst.risk === 'High')
    return `High risk${where}: the product is close enough to ${patent} to be confused with it (${of}, up to ${worst.percent ?? '?'}% similar). Redesign before launch, or clear the design.`;
  if (worst.risk === 'Medium')
    return `Medium risk${where}: the product shares dominant features with ${patent} (${of}, up to ${worst.percent ?? '?'}% similar). Have it reviewed before launch.`;
  return `Low risk: no view of ${patent} leaves the same overall impression as the product (at most ${worst.percent ?? '?'}% similar).`;
}

/** "High risk vs EU0040356240003S: up to 88% similar in 2 of 4 views". */
export function design1v1Summary(r: ReportInput<Design1v1Input>): string {
  const analysis = analyse1v1(r.outputs);
  const worst = analysis.worst;
  if (!worst) return `no comparison with ${r.input.patent}`;
  const atRisk = analysis.views.filter((view) => view.risk === worst.risk).length;
  return `${worst.risk} risk vs ${r.input.patent}: up to ${worst.percent ?? '?'}% similar in ${atRisk} of ${analysis.views.length} views`;
}

const percentText = (percent: number | undefined) => (percent === undefined ? '—' : `${percent}%`);

export function design1v1Markdown(r: ReportInput<Design1v1Input>, title: string): string {
  const { input } = r;
  const analysis = analyse1v1(r.outputs);
  const first = analysis.views[0];
  return blocks(
    heading(1, title),
    heading(2, 'Conclusion'),
    inline(design1v1Conclusion(input.patent, analysis)),
    heading(2, 'View by view'),
    table(
      ['View', 'Similarity', 'Risk', 'Design image'],
      analysis.views.map((view) => [
        view.view,
        percentText(view.percent),
        view.risk,
        view.image ? webLink(`view ${view.view}`, view.image) : '—',
      ]),
      '_The platform compared no view._',
    ),
    ...analysis.views.map((view) =>
      blocks(
        heading(3, `View ${view.view}: ${view.risk} risk, ${percentText(view.percent)} similar`),
        reviewBullets(view),
      ),
    ),
    heading(2, 'What was compared'),
    bullets([
      `Product: ${imageDescription(input.image, 0)}`,
      `Design: ${input.patent}${first ? ` (${shorten(first.title, 80)}, ${first.country}, ${first.status})` : ''}`,
      `Report language: ${input.lang}`,
    ]),
    input.image.data === undefined
      ? undefined
      : imageMarkdown(imageLabel(input.image, 0), input.image.data)?.markdown,
    `The design on Espacenet: ${webLink(input.patent, espacenetLink(input.patent)).markdown}. Similarity is the platform’s, as a percentage.`,
  );
}

/** The views' risks (a view that changes risk shows). */
export function design1v1Digest(r: ReportInput<Design1v1Input>): WorkflowDigest {
  const analysis = analyse1v1(r.outputs);
  return {
    lists: [
      {
        kind: 'views',
        entries: analysis.views.map((view) => ({
          id: `view ${view.view}`,
          text: `view ${view.view}: ${view.risk} risk, ${percentText(view.percent)}`,
        })),
      },
    ],
  };
}

export function design1v1Findings({ steps, input }: FindingsSource): BatchFindings {
  const patent = (input as Partial<Design1v1Input> | undefined)?.patent ?? '';
  const analysis = analyse1v1(steps);
  const worst = analysis.worst;
  return {
    references: String(analysis.views.length),
    ...(worst
      ? {
          closest: `${patent} view ${worst.view} (${worst.risk} risk)`,
          closestScore: percentText(worst.percent),
        }
      : {}),
    verdict: design1v1Conclusion(patent, analysis),
    detail: analysis.views.map((view) => ({
      Design: patent,
      View: view.view,
      'Similarity (%)': view.percent ?? '',
      Risk: view.risk,
      Differences: shorten(view.difference, 300),
      Suggestion: shorten(view.suggestion, 300),
    })),
  };
}
