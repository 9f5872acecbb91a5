/** The technical-disclosure report: the kept document, then the extraction's key content. */
import type { ReportInput } from '../../engine/workflow';
import type { DataOf } from '../../openplatform/schemas/responses';
import { blocks, bullets, fileLink, heading, inline, paragraphs, shorten } from '../../reports/markdown';
import { attachmentPath, outputOf } from '../common/step-data';
import { firstLine } from '../common/text-input';
import type { TechnicalDisclosureInput } from './workflow';

type Extraction = DataOf<'ai32-1PatentDisclosureTechMeans'>;

export const disclosureTitle = (input: TechnicalDisclosureInput) =>
  input.title ?? (firstLine(input.text, 100) || 'Technical disclosure');

/** The sections of the extraction, in the order a disclosure reads. */
const SECTIONS: [keyof Extraction & string, string][] = [
  ['tech_problem', 'Objectives of the invention'],
  ['background', 'Prior art'],
  ['mechanism', 'Mechanism'],
  ['outcome', 'Outcome'],
  ['embodiment', 'Embodiments'],
  ['others', 'Others'],
];

export function disclosureMarkdown(r: ReportInput<TechnicalDisclosureInput>): string {
  const { job, input, outputs, attachments } = r;
  const extraction = outputOf(outputs, 'extract', 'ai32-1PatentDisclosureTechMeans');
  const documents = attachments.map(
    (attachment) => `- ${fileLink(attachment.fileName, attachmentPath(job.id, attachment))}`,
  );
  const sections = SECTIONS.filter(
    ([key]) => typeof extraction?.[key] === 'string' && extraction[key] !== '',
  ).map(([key, name]) => `${heading(3, name)}\n\n${paragraphs(extraction?.[key])}`);
  return blocks(
    heading(1, `Technical disclosure: ${disclosureTitle(input)}`),
    inline(disclosureSummary(r)),
    heading(2, 'Disclosure document'),
    documents.length > 0 ? documents.join('\n') : '_No document was downloaded._',
    heading(2, 'Key content'),
    sections.length > 0 ? sections.join('\n\n') : '_The extraction is empty._',
    (extraction?.application ?? []).length > 0 &&
      `${heading(3, 'Applications')}\n\n${bullets(extraction?.application ?? [])}`,
    (extraction?.subject_improvement ?? []).length > 0 &&
      `${heading(3, 'Subjects of improvement')}\n\n${bullets(extraction?.subject_improvement ?? [])}`,
    !!extraction?.unidentified &&
      `${heading(3, 'Not identified')}\n\n${inline('Parts of the idea the extraction could not place:')}\n\n${paragraphs(extraction?.unidentified)}`,
  );
}

/** "disclosure-1a2b3c4d.docx; mechanism: Battery technology field". */
export function disclosureSummary({ outputs, attachments }: ReportInput<TechnicalDisclosureInput>): string {
  const extraction = outputOf(outputs, 'extract', 'ai32-1PatentDisclosureTechMeans');
  const document = attachments[0]?.fileName ?? 'no document';
  return extraction?.mechanism ? `${document}; mechanism: ${shorten(extraction.mechanism, 80)}` : document;
}
