/**
 * The feasibility analysis's report. The platform's assessment is its PDF (conclusion, technical
 * and economic feasibility, risks, related patents, recommendation), so the report leads with that
 * document, then the solution as it was assessed and how.
 */
import type { ReportInput } from '../../engine/workflow';
import { blocks, count, fileLink, heading, inline, paragraphs } from '../../reports/markdown';
import { attachmentPath } from '../common/step-data';
import type { FeasibilityInput } from './workflow';

/** "Assessment ready: feasibility-1a2b3c4d.pdf". */
export function feasibilitySummary(r: ReportInput<FeasibilityInput>): string {
  const pdf = r.attachments[0];
  return pdf ? `Assessment ready: ${pdf.fileName}` : 'no assessment document';
}

export function feasibilityMarkdown(r: ReportInput<FeasibilityInput>, title: string): string {
  const { input, job, attachments } = r;
  const documents = attachments.map(
    (attachment) => `- ${fileLink(attachment.fileName, attachmentPath(job.id, attachment))}`,
  );
  return blocks(
    heading(1, title),
    heading(2, 'Assessment'),
    documents.length > 0 ? documents.join('\n') : '_No document was downloaded._',
    inline(
      'The platform delivers its assessment as this document: the conclusion, the technical and economic feasibility, the risks, related patents and a recommendation.',
    ),
    heading(2, 'Solution assessed'),
    paragraphs(input.text),
    heading(2, 'How it was assessed'),
    inline(
      `Language ${input.lang}; ${input.logo === undefined ? 'logo as the platform chooses' : input.logo ? 'with the platform’s logo' : 'without logo'}; ${count(input.text.length)} characters sent.`,
    ),
  );
}
