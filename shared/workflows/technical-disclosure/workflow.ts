/**
 * technical-disclosure: from an idea to a technical disclosure document. The platform extracts the
 * key content (objective, prior art, mechanism, outcome...), writes the disclosure from it, and
 * exports a document that opflow downloads and keeps.
 *
 * ai32-1 extract (status "1" / "0") → ai32-2 generate (keeps job_id) → ai32-3 (poll until
 * job_status 2 and a download_url) → fetch the document.
 */
import * as z from 'zod';
import type { PollPolicy } from '../../engine/policies';
import { defineWorkflow, stepsFor } from '../../engine/workflow';
import type { DataOf } from '../../openplatform/schemas/responses';
import { shorten } from '../../reports/markdown';
import { nonEmpty, numberState } from '../common/step-data';
import { readTextDocument } from '../common/text-input';
import { disclosureMarkdown, disclosureSummary, disclosureTitle } from './report';

/** The input of a technical disclosure. */
export const technicalDisclosureInput = z.lazy(() =>
  z.strictObject({
    /** The technical idea or solution; the platform recommends more than 200 words, at most 5000. */
    text: z
      .string({ error: 'text: the technical idea or solution is required (a string)' })
      .trim()
      .min(1, { error: 'text: the technical idea is empty' })
      .refine((text) => text.split(/\s+/).length <= 5000, { error: 'text: at most 5000 words' }),
    /** The report's title; default: the idea's first line. */
    title: z.string().trim().min(1, { error: 'title: must not be empty when given' }).max(200).optional(),
    /** The language of the disclosure template, `cn` or `en`; default `en`. */
    language: z.enum(['cn', 'en'], { error: 'language: must be "cn" or "en"' }).default('en'),
  }),
);
export type TechnicalDisclosureInput = z.infer<typeof technicalDisclosureInput>;

/** Writing the disclosure takes a minute or two; the export follows quickly. */
export const disclosurePolls = {
  downloadLink: { firstDelayMs: 75_000, factor: 1.5, maxDelayMs: 90_000, giveUpAfterMs: 45 * 60_000 },
} satisfies Record<string, PollPolicy>;

type Extraction = DataOf<'ai32-1PatentDisclosureTechMeans'>;

/** ai32-2's body: the extraction echoed back with the original idea (the platform asks for both). */
export function generateRequest(input: TechnicalDisclosureInput, extraction: Extraction) {
  const text = (value: string | null | undefined) => (value ? value : undefined);
  return {
    language: input.language,
    tech_solution: input.text,
    mechanism: extraction.mechanism ?? '',
    background: text(extraction.background),
    tech_problem: text(extraction.tech_problem),
    outcome: text(extraction.outcome),
    embodiment: text(extraction.embodiment),
    others: text(extraction.others),
    application: extraction.application ?? undefined,
    subject_improvement: extraction.subject_improvement ?? undefined,
  };
}

const step = stepsFor('technical-disclosure', technicalDisclosureInput);

/** The generation job ai32-2 starts, and the document's link once it is written. */
const jobId = step.key('jobId', nonEmpty);
const downloadUrl = step.key('downloadUrl', nonEmpty);

const extract = step.call({
  name: 'extract',
  title: 'extract the key content',
  operation: 'ai32-1PatentDisclosureTechMeans',
  request: ({ input }) => ({ tech_solution: input.text }),
  decide: (data) => {
    if (data.status === '1') return { type: 'next' };
    if (data.status === '0') {
      return {
        type: 'fail',
        message: 'ai32-1 could not extract the key content of the idea (status "0")',
      };
    }
    return { type: 'fail', message: `ai32-1 answered an unknown status ${JSON.stringify(data.status)}` };
  },
});

const generate = step.call({
  name: 'generate',
  title: 'write the disclosure',
  operation: 'ai32-2PatentDisclosureGenerate',
  needs: [extract],
  request: (ctx) => generateRequest(ctx.input, ctx.output(extract)),
  decide: (data) => {
    const state = numberState(data.status);
    if (state === 'failed')
      return { type: 'fail', message: 'ai32-2 reported the disclosure generation as failed' };
    if (state === 'unknown') {
      return {
        type: 'fail',
        message: `ai32-2 answered an unknown status ${JSON.stringify(data.status)}`,
      };
    }
    // Running (1) or done (2): either way ai32-3 polls the job until its document is ready.
    return data.job_id
      ? { type: 'next', context: jobId.set(data.job_id) }
      : { type: 'fail', message: 'ai32-2 answered without a job_id' };
  },
});

const downloadLink = step.call({
  name: 'download-link',
  title: 'wait for the document',
  operation: 'ai32-3PatentDisclosureDownload',
  poll: disclosurePolls.downloadLink,
  request: (ctx) => ({ job_id: ctx.get(jobId) }),
  decide: (data) => {
    if (data.job_status === 3) {
      return {
        type: 'fail',
        message: 'ai32-3 reported an exception while generating the document (job_status 3)',
      };
    }
    if (data.job_status === 2 && data.download_url) {
      return { type: 'next', context: downloadUrl.set(data.download_url) };
    }
    // 0 pending, 1 exporting, or 2 before the link is there.
    return { type: 'poll' };
  },
});

const document = step.fetch({
  name: 'document',
  title: 'download the document',
  url: (ctx) => ctx.get(downloadUrl),
  refreshFrom: downloadLink,
  decide: () => ({ type: 'complete' }),
});

export const technicalDisclosure = defineWorkflow<TechnicalDisclosureInput>({
  name: 'technical-disclosure',
  version: 1,
  description:
    'Technical disclosure document from an idea: key content extracted, document generated and kept.',
  input: technicalDisclosureInput,
  fromText: (text, fileName) => {
    const document = readTextDocument(text, fileName);
    return { text: document.text, title: shorten(document.title, 200) };
  },
  steps: [extract, generate, downloadLink, document],
  report: (r) => ({
    title: `Technical disclosure: ${disclosureTitle(r.input)}`,
    markdown: disclosureMarkdown(r),
  }),
  summary: disclosureSummary,
  example: {
    text: 'A solid-state lithium battery whose ceramic separator is reinforced by a woven glass-fibre mesh, so that the separator survives 500 charge cycles without cracking. The mesh is embedded during tape casting and sintered with the ceramic.',
    title: 'Fibre-reinforced ceramic separator',
    lang: 'en',
  },
  commonNames: { lang: 'language' },
});
