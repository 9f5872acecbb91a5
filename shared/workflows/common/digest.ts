/**
 * Building blocks of the workflows' `digest` hooks (what a scheduled run is compared by with the
 * previous one): entries without repeats, the hash of a text, a mind map's solutions and cited
 * patents, a streamed answer with its references.
 */
import { createHash } from 'node:crypto';
import type { DigestEntry, ReportInput, StepHandle, WorkflowDigest } from '../../engine/workflow';
import { shorten } from '../../reports/markdown';
import { answerReferences } from './answer-references';
import { mindMapNodes } from './mind-map';
import { streamOutputOf } from './step-data';

/** The first 16 hex digits of the text's SHA-256: what a digest keeps of a text it compares. */
export const digestHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/** The entries without empty ids and without repeats (the first of each id kept). */
export function uniqueEntries(entries: DigestEntry[]): DigestEntry[] {
  const seen = new Set<string>();
  return entries.filter((entry) => {
    if (entry.id === '' || seen.has(entry.id)) return false;
    seen.add(entry.id);
    return true;
  });
}

/** A mind map's solutions (its nodes below the root, by title) and the patents they cite. */
export function mindMapDigest(cells: Parameters<typeof mindMapNodes>[0] | null | undefined): WorkflowDigest {
  if (!cells) return {};
  const nodes = mindMapNodes(cells).filter((node) => node.depth > 0);
  return {
    lists: [
      {
        kind: 'solutions',
        entries: uniqueEntries(
          nodes.map((node) => ({
            id: node.title.trim().toLowerCase(),
            text: [node.order, node.title, node.depth > 1 && node.route ? `(${node.route})` : undefined]
              .filter(Boolean)
              .join(' '),
          })),
        ),
      },
      {
        kind: 'cited patents',
        entries: uniqueEntries(
          nodes.flatMap((node) =>
            node.references.map((reference) => ({
              id: reference.pn,
              text: [reference.pn, shorten(reference.title, 100)].filter(Boolean).join(' · '),
            })),
          ),
        ),
      },
    ],
  };
}

/**
 * The first non-empty answer of the workflow's stream steps (its hash over collapsed white space)
 * and its references (the chat's `refDoc`, then the stream's own). Empty when none answered.
 */
export function streamedAnswerDigest(
  report: ReportInput,
  streamSteps: readonly StepHandle[],
  refDoc: unknown[] = [],
): WorkflowDigest {
  const streamed = streamSteps
    .map((step) => streamOutputOf(report.outputs, step.name))
    .find((output) => output !== undefined && output.text !== '');
  if (!streamed) return {};
  return {
    answer: {
      hash: digestHash(streamed.text.replace(/\s+/g, ' ').trim()),
      length: streamed.text.length,
      excerpt: shorten(streamed.text, 200),
    },
    lists: [
      {
        kind: 'answer references',
        entries: uniqueEntries(
          answerReferences(refDoc, streamed.references ?? []).map((reference) => ({
            id: reference.link || reference.text,
            text: shorten(reference.text || reference.link, 150),
          })),
        ),
      },
    ],
  };
}
