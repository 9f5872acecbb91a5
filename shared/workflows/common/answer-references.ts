/**
 * The references of a chat answer, from wherever the platform put them: ai68-1's `ref_doc`, a
 * stream's own references (ai50's `references`, ai20's `output.references`). Their fields differ by
 * operation, so each is read by the names it may carry.
 */
import type { StreamReference } from '../../openplatform/types';
import { field, plainText } from '../../reports/markdown';

export interface AnswerReference {
  type: string;
  text: string;
  date: string;
  link: string;
}

/** The chat's reference documents, then the stream's own references, without repeats. */
export function answerReferences(refDoc: unknown[], streamed: StreamReference[]): AnswerReference[] {
  const references: AnswerReference[] = [];
  const seen = new Set<string>();
  for (const item of [...refDoc, ...streamed]) {
    const reference = {
      type: plainText(field(item, 'doc_type_detail', 'type', 'doc_type')),
      text: plainText(field(item, '_text_display', 'text', 'title', 'text_summary', 'value')),
      date: plainText(field(item, 'post_time', 'post_date', 'date')),
      link: plainText(field(item, 'link', 'url')),
    };
    const identity = reference.link || reference.text;
    if (identity === '' || seen.has(identity)) continue;
    seen.add(identity);
    references.push(reference);
  }
  return references;
}
