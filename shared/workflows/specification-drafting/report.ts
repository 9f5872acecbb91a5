/**
 * The specification drafting's report, in the order the drafting attorney reads it: the drafted
 * specification document and what it was drafted as (category, classification, claims, embodiments),
 * then the claims as drafted (each claim's features, the ones left out struck through), the problem,
 * solution and effects the platform read, the embodiment outline, the terms, and what was submitted.
 */
import type { BatchFindings, FindingsSource, ReportInput, WorkflowDigest } from '../../engine/workflow';
import {
  blocks,
  cellText,
  count,
  fileLink,
  heading,
  inline,
  paragraphs,
  Rendered,
  shorten,
  table,
} from '../../reports/markdown';
import { uniqueEntries } from '../common/digest';
import { attachmentPath, outputOf } from '../common/step-data';
import type { SpecificationInput } from './input';

interface DraftedClaim {
  num: string;
  parents: string[];
  kept: string[];
  leftOut: string[];
}

/** The claims as drafted: each claim's features, split by the selection (all kept when none was made). */
export function draftedClaims(
  outputs: Record<string, unknown>,
  chosen: readonly string[] | undefined,
): DraftedClaim[] {
  const tree = (outputOf(outputs, 'features', 'ai37-3ExtractFeatureCnipa')?.feature_tree ?? []).filter(
    (claim) => (claim?.claim_features ?? []).length > 0,
  );
  const picked = chosen && chosen.length > 0 ? new Set(chosen) : undefined;
  return tree.map((claim, claimIndex) => {
    const num = (claim?.num ?? '').trim() || String(claimIndex + 1);
    const features = (claim?.claim_features ?? []).map((feature, index) => ({
      text: feature?.feature ?? '',
      kept: picked ? picked.has(`c${num}f${index + 1}`) : feature?.feature_deleted !== 1,
    }));
    return {
      num,
      parents: (claim?.parent ?? '')
        .split(/[,，\s]+/)
        .map((part) => part.trim())
        .filter(Boolean),
      kept: features.filter((feature) => feature.kept).map((feature) => feature.text),
      leftOut: features.filter((feature) => !feature.kept).map((feature) => feature.text),
    };
  });
}

const independentCount = (claims: DraftedClaim[]) =>
  claims.filter((claim) => claim.parents.length === 0).length;

function embodimentCount(outputs: Record<string, unknown>): number {
  const summary = outputOf(outputs, 'summary', 'ai37-2InitResultCnipa');
  return (summary?.embodiment_outline ?? []).filter((item) => item?.label !== 'common').length;
}

/** "Specification drafted: 3 claims (1 independent), 1 embodiment, Machine, B64U 50/39". */
export function specificationSummary(r: ReportInput<SpecificationInput>): string {
  const summary = outputOf(r.outputs, 'summary', 'ai37-2InitResultCnipa');
  const claims = draftedClaims(r.outputs, r.selections['features']);
  if (!summary || claims.length === 0) return 'specification not drafted';
  const embodiments = embodimentCount(r.outputs);
  const parts = [
    `${claims.length} ${claims.length === 1 ? 'claim' : 'claims'} (${independentCount(claims)} independent)`,
    `${embodiments} ${embodiments === 1 ? 'embodiment' : 'embodiments'}`,
    r.input.category ?? summary.category ?? undefined,
    (summary.classification ?? []).slice(0, 3).join(', ') || undefined,
  ];
  const leftOut = claims.reduce((total, claim) => total + claim.leftOut.length, 0);
  if (leftOut > 0) parts.push(`${leftOut} ${leftOut === 1 ? 'feature' : 'features'} left out`);
  return `Specification drafted: ${parts.filter(Boolean).join(', ')}`;
}

function claimsTable(claims: DraftedClaim[]): string {
  return table(
    ['Claim', 'Depends on', 'Features described'],
    claims.map((claim) => [
      claim.num,
      claim.parents.length > 0 ? claim.parents.join(', ') : 'independent',
      new Rendered(
        [
          ...claim.kept.map((feature) => cellText(feature)),
          ...claim.leftOut.map((feature) => `~~${cellText(feature)}~~ (left out)`),
        ].join(' · '),
      ),
    ]),
    '_The platform extracted no claim features._',
  );
}

/** The report of a finished specification drafting. */
export function specificationMarkdown(r: ReportInput<SpecificationInput>, title: string): string {
  const { input, outputs, job, attachments } = r;
  const summary = outputOf(outputs, 'summary', 'ai37-2InitResultCnipa');
  const extracted = outputOf(outputs, 'features', 'ai37-3ExtractFeatureCnipa');
  const claims = draftedClaims(outputs, r.selections['features']);
  const outline = (summary?.embodiment_outline ?? []).filter((item) => item?.label !== 'common');
  const documents = attachments.map(
    (attachment) => `- ${fileLink(attachment.fileName, attachmentPath(job.id, attachment))}`,
  );
  const category = input.category
    ? `${input.category} (given; the platform read ${summary?.category ?? 'none'})`
    : (summary?.category ?? '—');
  const leftOut = claims.flatMap((claim) => claim.leftOut.map(() => claim.num));
  return blocks(
    heading(1, title),
    heading(2, 'Specification document'),
    documents.length > 0 ? documents.join('\n') : '_No document was downloaded._',
    inline(
      `Drafted for CNIPA as: category ${category}; classification ${(summary?.classification ?? []).join(', ') || '—'}; ${count(claims.length)} claims (${independentCount(claims)} independent); ${count(outline.length)} embodiments; ${count(extracted?.terms?.length ?? 0)} terms; ${input.drawings?.length ? `${input.drawings.length} drawings` : 'no drawings'}.`,
    ),
    leftOut.length > 0
      ? inline(
          `${leftOut.length} ${leftOut.length === 1 ? 'feature was' : 'features were'} left out at the selection (claims ${[...new Set(leftOut)].join(', ')}): check the claims below before filing.`,
        )
      : undefined,
    heading(2, 'Claims as drafted'),
    claimsTable(claims),
    heading(2, 'Problem, solution and effects'),
    heading(3, 'Technical problem'),
    paragraphs(summary?.technical_problem),
    heading(3, 'Technical solution'),
    paragraphs(summary?.technical_methods),
    heading(3, 'Effects'),
    paragraphs(summary?.benefit),
    heading(2, 'Embodiments'),
    table(
      ['#', 'Claims', 'Outline'],
      outline.map((item, index) => [
        item?.embodiment_number ?? index + 1,
        (item?.claim_numbers ?? []).join(', ') || '—',
        shorten(item?.text ?? item?.claim_text, 600),
      ]),
      '_The platform outlined no embodiment._',
    ),
    heading(2, 'Terms'),
    inline(
      (extracted?.terms ?? [])
        .map((term) => term?.name)
        .filter(Boolean)
        .join(' · '),
    ) || '_(none)_',
    heading(2, 'Submitted'),
    heading(3, 'Claims'),
    paragraphs(input.claims),
    inline(`Disclosure: ${count(input.disclosure.length)} characters.`),
  );
}

/** A scheduled drafting compared with its previous run: its classification and claim features. */
export function specificationDigest(r: ReportInput<SpecificationInput>): WorkflowDigest {
  const summary = outputOf(r.outputs, 'summary', 'ai37-2InitResultCnipa');
  if (!summary) return {};
  return {
    lists: [
      {
        kind: 'classification',
        entries: uniqueEntries((summary.classification ?? []).map((code) => ({ id: code, text: code }))),
      },
      {
        kind: 'claim features',
        entries: uniqueEntries(
          draftedClaims(r.outputs, r.selections['features']).flatMap((claim) =>
            claim.kept.map((feature) => ({
              id: `${claim.num}:${feature}`,
              text: `claim ${claim.num}: ${shorten(feature, 150)}`,
            })),
          ),
        ),
      },
    ],
  };
}

/** A batch's row: the claims and the classification; the workbook's sheet has a row per claim. */
export function specificationFindings({ steps, selections }: FindingsSource): BatchFindings {
  const claims = draftedClaims(steps, selections?.['features']);
  if (claims.length === 0) return {};
  const summary = outputOf(steps, 'summary', 'ai37-2InitResultCnipa');
  return {
    verdict: `drafted: ${claims.length} claims (${independentCount(claims)} independent), classification ${(summary?.classification ?? []).join(', ') || 'none'}`,
    detail: claims.map((claim) => ({
      Claim: claim.num,
      'Depends on': claim.parents.join(', ') || 'independent',
      'Features described': claim.kept.join('; '),
      'Left out': claim.leftOut.join('; '),
    })),
  };
}
