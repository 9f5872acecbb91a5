/**
 * The novelty-check report, in the order an IP professional reads it: the conclusion (what is
 * anticipated, by which document, what is new) with the search's date window and language, the
 * features × references matrix, the references with their bibliographic data, citation category and
 * claims, then the detail of each comparison, the invention's summary and the search elements.
 * Each feature's text appears once (in the matrix); afterwards it is named by its id.
 */
import { type ReportInput, skippedSteps } from '../../engine/workflow';
import {
  blocks,
  count,
  fileLink,
  heading,
  inline,
  paragraphs,
  plainText,
  score,
  shorten,
  table,
  webLink,
} from '../../reports/markdown';
import {
  familiesOf,
  familyText,
  isPublicationNumber,
  legalStatusesOf,
  type PatentFamily,
  patentStatusNotes,
} from '../common/patent-status';
import { attachmentPath, outputOf } from '../common/step-data';
import {
  analyseNovelty,
  type CitedReference,
  claimRanges,
  disclosureMark,
  type FeatureRow,
  type NoveltyAnalysis,
} from './analysis';

/** The input fields the report reads (the workflow's input type lives in novelty-check.ts). */
export interface NoveltyReportInput {
  lang: 'cn' | 'en';
  /** Whether the references' bibliographic data was asked for (p011); default true. */
  bibliography?: boolean | undefined;
  /** Whether the references' legal status (p041) and family (p014) were asked for; default true. */
  legalData?: boolean | undefined;
  pbdStart?: string | undefined;
  pbdEnd?: string | undefined;
  /** The disclosure's priority (or filing) date: the prior-art cut-off. */
  priorityDate?: string | undefined;
}

/** The features (with the selection) and references a job's kept outputs hold, analysed. */
export function noveltyAnalysisOf(
  { outputs, selections }: Pick<ReportInput, 'outputs' | 'selections'>,
  input?: Pick<NoveltyReportInput, 'pbdEnd' | 'priorityDate'>,
) {
  const features = outputOf(outputs, 'features', 'ai35-4FeatureExtract')?.data ?? [];
  const references = outputOf(outputs, 'agent-result', 'ai35-8NoveltySearchAgentResult')?.final_result ?? [];
  // The prior-art cut-off: the priority date, else the search's end. A reference is dated by its
  // publication date from the bibliographic data (p011).
  const cutoff = input?.priorityDate ?? input?.pbdEnd;
  const bibliographies = bibliographiesOf(outputs);
  return analyseNovelty(
    features,
    new Set(selections['features'] ?? []),
    references,
    cutoff === undefined
      ? undefined
      : {
          cutoff: isoDay(cutoff),
          publishedOn: (reference) => bibliographies.get(reference.id)?.publicationDate,
        },
  );
}

const LANGUAGES = { en: 'English (en)', cn: 'Chinese (cn)' } as const;

const isoDay = (text: string) =>
  /^\d{8}$/.test(text) ? `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6)}` : text;

/** "publications from 2015-01-01 to 2024-12-31" / "any publication date (no limit set)". */
function dateWindow(input: NoveltyReportInput): string {
  const end = input.pbdEnd ?? input.priorityDate;
  const why = input.pbdEnd === undefined && end !== undefined ? ' (the priority date)' : '';
  if (!input.pbdStart && !end) return 'any publication date (no limit set)';
  if (input.pbdStart && end) return `publications from ${isoDay(input.pbdStart)} to ${isoDay(end)}${why}`;
  return input.pbdStart
    ? `publications from ${isoDay(input.pbdStart)} on`
    : `publications up to ${isoDay(end as string)}${why}`;
}

/** Bibliographic data of one reference, from what the platform gave. */
export interface Bibliography {
  publicationNumber?: string | undefined;
  title?: string | undefined;
  assignee?: string | undefined;
  applicationDate?: string | undefined;
  publicationDate?: string | undefined;
  priorityDate?: string | undefined;
}

export { isPublicationNumber };

/** A public link to a document by its publication number (Espacenet, the EPO's free service). */
export function documentLink(publicationNumber: string | undefined): string | undefined {
  if (!publicationNumber || !isPublicationNumber(publicationNumber)) return undefined;
  return `https://worldwide.espacenet.com/patent/search?q=pn%3D${encodeURIComponent(publicationNumber)}`;
}

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
const first = (value: unknown): unknown => (Array.isArray(value) ? value[0] : value);
const dateOf = (value: unknown): string | undefined => {
  const text = plainText(value).trim();
  return text === '' ? undefined : isoDay(text.slice(0, 10));
};

/**
 * Bibliographic records by patent id and publication number, from a kept P011 answer (simple
 * bibliography: `data[]` of `{patent_id, pn, bibliographic_data{...}}`), when the job has one.
 */
export function bibliographiesOf(outputs: Record<string, unknown>): Map<string, Bibliography> {
  const byId = new Map<string, Bibliography>();
  const answer = outputs['bibliography'];
  const rows = Array.isArray(answer)
    ? answer
    : Array.isArray(record(answer)['data'])
      ? record(answer)['data']
      : [];
  for (const row of rows as unknown[]) {
    const item = record(row);
    const data = record(item['bibliographic_data']);
    const publication = record(data['publication_reference']);
    const titles = Array.isArray(data['invention_title']) ? (data['invention_title'] as unknown[]) : [];
    const title =
      titles.map(record).find((entry) => plainText(entry['lang']).toUpperCase() === 'EN') ??
      record(first(titles));
    const parties = record(data['parties']);
    const assignees = [parties['assignees'], parties['applicants']].find(
      (names) => Array.isArray(names) && names.length > 0,
    ) as unknown[] | undefined;
    const number =
      plainText(item['pn']).trim() ||
      `${plainText(publication['country'])}${plainText(publication['doc_number'])}${plainText(publication['kind'])}`.trim();
    const bibliography: Bibliography = {
      publicationNumber: number || undefined,
      title: plainText(title['text']).trim() || undefined,
      assignee:
        (assignees ?? [])
          .map((party) => plainText(record(party)['name']).trim())
          .filter((name) => name !== '')
          .join('; ') || undefined,
      applicationDate: dateOf(record(data['application_reference'])['date']),
      publicationDate: dateOf(publication['date']),
      priorityDate: dateOf(record(first(data['priority_claims']))['date']),
    };
    for (const key of [plainText(item['patent_id']).trim(), number]) if (key) byId.set(key, bibliography);
  }
  return byId;
}

/** A reference's legal status (p041) and family (p014), when the job fetched them. */
export interface ReferenceStatus {
  legalStatus: string | undefined;
  family: PatentFamily | undefined;
}

/**
 * Looks up each reference's legal status and family in the kept p041 and p014 answers, by the
 * platform's id and by its publication number (from the bibliographic data).
 */
export function referenceStatusesOf(
  outputs: Record<string, unknown>,
  bibliographies: Map<string, Bibliography>,
): (reference: CitedReference) => ReferenceStatus {
  const statuses = legalStatusesOf(outputs);
  const families = familiesOf(outputs);
  return (reference) => {
    const keys = [reference.id, bibliographies.get(reference.id)?.publicationNumber].filter(
      (key): key is string => Boolean(key),
    );
    const find = <T>(map: Map<string, T>) =>
      keys.map((key) => map.get(key)).find((value) => value !== undefined);
    return { legalStatus: find(statuses)?.status, family: find(families) };
  };
}

const cellOf = (reference: CitedReference, feature: FeatureRow) => {
  const cell = reference.cells.get(feature.id);
  if (!cell) return '—';
  return `${disclosureMark[cell.disclosure]} ${cell.score === undefined ? '' : cell.score}`.trim();
};

function conclusionLines(analysis: NoveltyAnalysis, input: NoveltyReportInput, searched: string): string {
  const { conclusion, compared } = analysis;
  const closest = conclusion.closest;
  const parts = [
    `**${inline(conclusion.verdict)}**`,
    '',
    `- Anticipated by a single document${closest ? ` (${closest.label}, ${inline(closest.id)})` : ''}: ${
      conclusion.single.length > 0 ? conclusion.single.join(', ') : 'none'
    }`,
    `- Found only in other documents or as close variants: ${
      conclusion.combination.length > 0
        ? conclusion.combination
            .map((entry) => `${entry.feature} (${entry.references.join(', ')})`)
            .join('; ')
        : 'none'
    }`,
    `- Not found: ${conclusion.notFound.length > 0 ? conclusion.notFound.join(', ') : 'none'}`,
    `- Searched: ${dateWindow(input)}; language ${LANGUAGES[input.lang]}; ${searched}; ${compared.length} ${
      compared.length === 1 ? 'feature' : 'features'
    } compared.`,
  ];
  return parts.join('\n');
}

function matrix(analysis: NoveltyAnalysis): string {
  const { features, references } = analysis;
  if (features.length === 0) return '_The platform extracted no features._';
  const rows = features.map((feature) => [
    feature.id,
    `${feature.text}${feature.selected ? '' : ' (not selected: not searched)'}${feature.added ? ' (compared by the platform)' : ''}`,
    ...references.map((reference) => cellOf(reference, feature)),
  ]);
  // opflow counts a feature only where the reference discloses it (●); the platform's
  // feature_match_num counts close variants (◐) too. Where they differ, both are shown.
  const platformCounts = references.map((reference) => toScore(reference.reference.feature_match_num));
  const found = references.map((reference, index) => {
    const own = `${reference.disclosed.length}/${analysis.compared.length}`;
    const theirs = platformCounts[index];
    return theirs === undefined || theirs === reference.disclosed.length
      ? own
      : `${own} (platform: ${theirs})`;
  });
  rows.push(['', 'Features disclosed', ...found]);
  const differ = references.some(
    (reference, index) =>
      platformCounts[index] !== undefined && platformCounts[index] !== reference.disclosed.length,
  );
  return blocks(
    table(
      ['Id', 'Feature', ...references.map((reference) => `${reference.label} (${reference.category})`)],
      rows,
    ),
    inline(
      `Each cell: ● disclosed · ◐ similar (an obvious variant) · ○ not disclosed · — not compared; the number is the platform’s similarity score (0–100, the scale of every score in this report). Column: the reference and its citation category.${
        differ
          ? ' Features disclosed: opflow counts only ● (disclosed); "platform" is the platform’s own count (feature_match_num, as in its report document), which also counts features it found similar (◐) or matched otherwise.'
          : ''
      }`,
    ),
  ).trimEnd();
}

/**
 * What the reader must know about the bibliographic columns: not asked for, the p011 step failed
 * (and why), or the platform had no record of some references. Undefined when every one has its data.
 */
export function bibliographyNote(
  analysis: NoveltyAnalysis,
  bibliographies: Map<string, Bibliography>,
  input: NoveltyReportInput,
  r: Pick<ReportInput, 'outputs' | 'context'>,
): string | undefined {
  if (analysis.references.length === 0) return undefined;
  const fallback = 'the table shows the platform’s patent ids, and its comparison text in place of titles';
  if (input.bibliography === false)
    return `Bibliographic data was not asked for (\`bibliography: false\`): ${fallback}.`;
  const skipped = skippedSteps(r.context)['bibliography'];
  if (skipped) {
    const why = skipped.message.trim() || skipped.kind;
    return `**Bibliographic data is missing:** the bibliographic call (p011) failed: ${inline(why)}. So ${fallback}; the rest of the check is complete.`;
  }
  if (r.outputs['bibliography'] === undefined)
    return `Bibliographic data was not fetched for this job: ${fallback}.`;
  const without = analysis.references.filter((reference) => !bibliographies.has(reference.id));
  if (without.length === 0) return undefined;
  return `The platform has no bibliographic record of ${without
    .map((reference) => `${reference.label} (${reference.id})`)
    .join(
      ', ',
    )}: ${without.length === 1 ? 'its row shows' : 'their rows show'} the platform’s patent id and comparison text.`;
}

/** A reference's first cells: its label, its publication number (linked to Espacenet) and its title. */
function identityCells(reference: CitedReference, bibliography: Bibliography | undefined): unknown[] {
  const number = bibliography?.publicationNumber ?? reference.id;
  const link = documentLink(number);
  return [
    reference.label,
    link ? webLink(number, link) : number,
    bibliography?.title ?? shorten(reference.reference.document, 160),
  ];
}

function referencesTable(
  analysis: NoveltyAnalysis,
  bibliographies: Map<string, Bibliography>,
  statusOf: (reference: CitedReference) => ReferenceStatus,
  notes: (string | undefined)[],
): string {
  const rows = analysis.references.map((reference) => {
    const bibliography = bibliographies.get(reference.id);
    const status = statusOf(reference);
    return [
      ...identityCells(reference, bibliography),
      bibliography?.assignee ?? '—',
      bibliography?.publicationDate ?? '—',
      bibliography?.applicationDate ?? '—',
      status.legalStatus ?? '—',
      familyText(status.family) ?? '—',
      `${reference.category}${reference.categorySource === 'derived' ? '*' : ''}`,
      reference.claims.length > 0 ? claimRanges(reference.claims) : '—',
      score(publicScore(reference.reference.public_score)),
    ];
  });
  const derived = analysis.references.some((reference) => reference.categorySource === 'derived');
  return blocks(
    ...notes,
    table(
      [
        'Ref',
        'Publication',
        'Title',
        'Assignee',
        'Published',
        'Filed',
        'Legal status',
        'Family',
        'Category',
        'Claims',
        'Score (0–100)',
      ],
      rows,
      '_No references found._',
    ),
    analysis.references.length > 0
      ? inline(
          `Category: X relevant taken alone, Y relevant in combination with another document, A background${
            derived ? ' (* worked out from the platform’s comparison, which gave no category)' : ''
          }. Claims: the claims whose features the reference discloses or comes close to. Legal status: the platform’s simple legal status (Active, Pending, Inactive); Family: its simple family’s members and where they were filed.`,
        )
      : undefined,
  ).trimEnd();
}

/**
 * A reference's public score on the report's one scale, 0–100 (the platform gives it as 0–1, and its
 * feature comparisons as 0–100).
 */
export function publicScore(value: unknown): number | undefined {
  const number = toScore(value);
  if (number === undefined) return undefined;
  return Math.round((number <= 1 ? number * 100 : number) * 10) / 10;
}

const toScore = (value: unknown) => {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
};

function referenceDetail(
  reference: CitedReference,
  analysis: NoveltyAnalysis,
  bibliography: Bibliography | undefined,
  status: ReferenceStatus,
): string {
  const source = reference.reference;
  const rows = analysis.features
    .filter((feature) => reference.cells.has(feature.id))
    .map((feature) => {
      const cell = reference.cells.get(feature.id)!;
      const comparison = cell.comparison;
      const claim = toScore(comparison.claim_num);
      return [
        feature.id,
        `${disclosureMark[cell.disclosure]} ${cell.score ?? ''}`.trim(),
        claim === undefined
          ? '—'
          : `${claim}${comparison.claim_type ? ` (${plainText(comparison.claim_type)})` : ''}`,
        comparison.comparison_feature ?? comparison.compare_feature,
        shorten(comparison.reason_for_user ?? comparison.reason, 300),
      ];
    });
  const facts = [
    bibliography?.priorityDate ? `priority ${bibliography.priorityDate}` : undefined,
    status.legalStatus ? `legal status ${status.legalStatus}` : undefined,
    status.family ? `family of ${familyText(status.family)}` : undefined,
    `category ${reference.category}`,
    `public score ${score(publicScore(source.public_score))} of 100`,
    `discloses ${reference.disclosed.length > 0 ? reference.disclosed.join(', ') : 'none'}`,
    reference.similar.length > 0 ? `close to ${reference.similar.join(', ')}` : undefined,
    source.most_similar ? 'the platform’s most similar document' : undefined,
  ].filter((fact): fact is string => fact !== undefined);
  return blocks(
    heading(
      3,
      `${reference.label} · ${bibliography?.publicationNumber ?? reference.id}${
        bibliography?.title ? ` · ${shorten(bibliography.title, 120)}` : ''
      }`,
    ),
    source.document ? `> ${inline(shorten(source.document, 600))}` : undefined,
    inline(facts.join(' · ')),
    table(['Feature', 'Mark', 'Claim', 'In the reference', 'Reason'], rows, '_No feature comparison._'),
  ).trimEnd();
}

/**
 * References published after the prior-art cut-off: not prior art to this disclosure, so never X or
 * Y and not in the conclusion; listed apart for the reader to see what was left out and why.
 */
function lateSection(analysis: NoveltyAnalysis, bibliographies: Map<string, Bibliography>): string[] {
  const notes: string[] = [];
  if (analysis.cutoff !== undefined && analysis.undated.length > 0)
    notes.push(
      inline(
        `The publication date of ${analysis.undated.join(', ')} is not known (no bibliographic data), so ${
          analysis.undated.length === 1 ? 'it was' : 'they were'
        } not checked against the priority date ${analysis.cutoff}.`,
      ),
    );
  if (analysis.late.length === 0) return notes;
  const rows = analysis.late.map((reference) => {
    return [
      ...identityCells(reference, bibliographies.get(reference.id)),
      reference.published,
      reference.disclosed.length > 0 ? reference.disclosed.join(', ') : 'none',
    ];
  });
  return [
    heading(2, 'Published after the priority date'),
    inline(
      `Published after ${analysis.cutoff}, the disclosure's priority date: not prior art to it, so never rated X or Y and left out of the conclusion and the matrix. Shown for completeness (a later application may still matter for other reasons).`,
    ),
    table(['Ref', 'Publication', 'Title', 'Published', 'Would disclose'], rows),
    ...notes,
  ];
}

function elementsTable(analysis: NoveltyAnalysis, outputs: Record<string, unknown>): string {
  const elements = outputOf(outputs, 'search-elements', 'ai35-6RetrievalElements')?.elements?.list ?? [];
  const idOf = new Map(analysis.features.map((feature) => [feature.text.toLowerCase(), feature.id]));
  const keys = (items: ({ key?: string | null } | null | undefined)[]) =>
    items.map((item) => item?.key).filter((key): key is string => typeof key === 'string' && key !== '');
  const rows = elements.map((element) => {
    const express = element.express ?? [];
    const text = plainText(element.feature_text_original).trim();
    return [
      idOf.get(text.toLowerCase()) ?? text,
      element.feature_type,
      keys(express.map((entry) => entry.word)).join(', '),
      keys(express.flatMap((entry) => entry.extend ?? [])).join(', '),
      keys(express.flatMap((entry) => entry.ipc ?? [])).join(', '),
      element.selected === false ? 'no' : 'yes',
    ];
  });
  return table(['Feature', 'Type', 'Keywords', 'Extensions', 'IPC', 'Used'], rows);
}

export function noveltyReportMarkdown(
  r: Pick<ReportInput, 'job' | 'outputs' | 'selections' | 'attachments' | 'context'>,
  input: NoveltyReportInput,
  title: string,
): string {
  const { job, outputs, attachments } = r;
  const analysis = noveltyAnalysisOf(r, input);
  const bibliographies = bibliographiesOf(outputs);
  const statusOf = referenceStatusesOf(outputs, bibliographies);
  const statusNotes =
    analysis.references.length + analysis.late.length > 0
      ? patentStatusNotes(input.legalData !== false, r.context, outputs)
      : undefined;
  const summary = outputOf(outputs, 'summary', 'ai35-2TechSolutionGet');
  const result = outputOf(outputs, 'agent-result', 'ai35-8NoveltySearchAgentResult');
  const searched =
    result?.find_patent_num !== null && result?.find_patent_num !== undefined
      ? `${count(result.find_patent_num)} potentially similar patents found, ${analysis.references.length} compared`
      : `${analysis.references.length} ${analysis.references.length === 1 ? 'reference' : 'references'} compared`;
  const documents = attachments.map(
    (attachment) => `- ${fileLink(attachment.fileName, attachmentPath(job.id, attachment))}`,
  );
  const details = analysis.features
    .filter((feature) => feature.number !== undefined || feature.weight !== undefined)
    .map((feature) => [feature.id, feature.number, feature.weight, feature.selected ? 'yes' : 'no']);
  return blocks(
    heading(1, title),
    heading(2, 'Conclusion'),
    conclusionLines(analysis, input, searched),
    heading(2, 'Features × references'),
    matrix(analysis),
    heading(2, 'References'),
    referencesTable(analysis, bibliographies, statusOf, [
      bibliographyNote(analysis, bibliographies, input, r),
      statusNotes?.legalStatusNote,
      statusNotes?.familyNote,
    ]),
    ...analysis.references.map((reference) =>
      referenceDetail(reference, analysis, bibliographies.get(reference.id), statusOf(reference)),
    ),
    ...lateSection(analysis, bibliographies),
    heading(2, 'The invention'),
    paragraphs(summary?.tech_solution),
    details.length > 0 ? table(['Feature', 'Platform no.', 'Weight', 'Selected'], details) : undefined,
    heading(2, 'Search elements'),
    elementsTable(analysis, outputs),
    heading(2, 'Report document'),
    documents.length > 0 ? documents.join('\n') : '_No document was downloaded._',
  );
}
