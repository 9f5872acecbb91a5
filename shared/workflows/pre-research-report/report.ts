/** The pre-research report's report: key players, key patents, the kept document, the chapters, the question. */
import type { ReportInput } from '../../engine/workflow';
import {
  blocks,
  fileLink,
  heading,
  inline,
  outline,
  paragraphs,
  type RecordColumn,
  recordsTable,
  shorten,
  table,
} from '../../reports/markdown';
import { attachmentPath, outputOf } from '../common/step-data';
import type { PreResearchReportInput } from './workflow';

export const preResearchTitle = (input: PreResearchReportInput) =>
  input.title ?? shorten(input.question, 100);

const playerColumns: RecordColumn[] = [
  { header: 'Player', keys: ['display_name', 'name', 'name_en', 'normalized_name', 'org_name', 'applicant'] },
  { header: 'Country', keys: ['country_name', 'country'] },
  { header: 'Type', keys: ['entity_type', 'normalized_entity_type_en'] },
  { header: 'Patents', keys: ['patent_count', 'patent_num', 'count', 'doc_count'] },
];
const patentColumns: RecordColumn[] = [
  { header: 'Publication', keys: ['pn', 'patent_id', 'publication_number'] },
  { header: 'Title', keys: ['title', 'name'] },
  { header: 'Score', keys: ['score', 'public_score', 'value'] },
  { header: 'Interpretation', keys: ['interpretation', 'summary', 'content', 'reason'] },
];

/** The records of an analysis object (its first list of objects), or undefined when it has none. */
function recordsOf(analysis: Record<string, unknown> | null | undefined): unknown[] | undefined {
  if (!analysis) return undefined;
  if (Array.isArray(analysis)) return analysis;
  const list = Object.values(analysis).find(
    (value) => Array.isArray(value) && value.some((item) => item !== null && typeof item === 'object'),
  );
  return list as unknown[] | undefined;
}

/** An analysis object as a table of its records when it has some, else as an outline. */
function analysisBlock(
  analysis: Record<string, unknown> | null | undefined,
  columns: RecordColumn[],
): string {
  const records = recordsOf(analysis);
  if (records) return recordsTable(records, columns);
  return analysis ? outline(analysis) : '_Not part of this report._';
}

export function preResearchMarkdown(r: ReportInput<PreResearchReportInput>): string {
  const { job, input, outputs, attachments } = r;
  const result = outputOf(outputs, 'report', 'ai34-3QuickSearchReportQuery');
  const directory =
    outputOf(outputs, 'custom-directory', 'ai34-2CreationCustomDir')?.analysis_directory ??
    outputOf(outputs, 'create', 'ai34-1QuickSearchReportCreation')?.analysis_directory ??
    [];
  const documents = attachments.map(
    (attachment) => `- ${fileLink(attachment.fileName, attachmentPath(job.id, attachment))}`,
  );
  return blocks(
    heading(1, `Pre-research report: ${preResearchTitle(input)}`),
    inline(preResearchSummary(r)),
    heading(2, 'Key players'),
    analysisBlock(result?.head_player_analysis, playerColumns),
    heading(2, 'Key patents'),
    analysisBlock(result?.key_patent_interpretation, patentColumns),
    heading(2, 'Report document'),
    documents.length > 0 ? documents.join('\n') : '_No document was downloaded._',
    heading(2, 'Chapters'),
    table(
      ['Chapter', 'Key', 'Source'],
      directory.map((entry) => [
        entry.name,
        (entry.key ?? '').replace('TECH_RESEARCH_', ''),
        entry.source_type,
      ]),
    ),
    heading(2, 'Question'),
    paragraphs(input.question),
  );
}

/** "4 key players, 3 key patents, report pre-research-1a2b3c4d.html". */
export function preResearchSummary({ outputs, attachments }: ReportInput<PreResearchReportInput>): string {
  const result = outputOf(outputs, 'report', 'ai34-3QuickSearchReportQuery');
  const players = recordsOf(result?.head_player_analysis)?.length ?? 0;
  const patents = recordsOf(result?.key_patent_interpretation)?.length ?? 0;
  const document = attachments[0]?.fileName;
  return [
    `${players} key ${players === 1 ? 'player' : 'players'}`,
    `${patents} key ${patents === 1 ? 'patent' : 'patents'}`,
    document ? `report ${document}` : 'no report document',
  ].join(', ');
}
