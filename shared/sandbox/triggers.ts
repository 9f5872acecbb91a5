/**
 * Trigger markers: text that a caller puts in an input to make the sandbox misbehave on purpose.
 *
 * - `[sandbox:fail]` fails the workflow's first asynchronous step (see README for which one).
 * - `[sandbox:fail:<ref>]` fails the step polled by `<ref>`, e.g. `[sandbox:fail:ai35-8]`.
 * - `[sandbox:no-recommend]` makes ai73-2 answer `has_recommend: false` with no recommendations.
 * - `[sandbox:no-results]` makes the FTO search (ai66-5) succeed having found no patent.
 *
 * Markers are stripped from generated content, so they never show up in documents.
 */
import * as z from 'zod';

const MARKER = /\[sandbox:([a-z-]+)(?::([a-z0-9-]+))?\]/gi;

export interface Triggers {
  /** `[sandbox:fail]` without a step. */
  failFirst: boolean;
  /** Steps named by `[sandbox:fail:<ref>]`, lower case, each once (a list, so a task's triggers are plain JSON). */
  failRefs: readonly string[];
  noRecommend: boolean;
  /** `[sandbox:no-results]`: a search that succeeds without finding anything. */
  noResults?: boolean | undefined;
}

/** Triggers as kept in a sandbox state file. */
export const triggersSchema = z.strictObject({
  failFirst: z.boolean(),
  failRefs: z.array(z.string().min(1)),
  noRecommend: z.boolean(),
  noResults: z.boolean().optional(),
}) satisfies z.ZodType<Triggers>;

/** Collect the markers found anywhere in a request body (all its strings). */
export function triggersIn(value: unknown): Triggers {
  const text = JSON.stringify(value) ?? '';
  const failRefs = new Set<string>();
  let failFirst = false;
  let noRecommend = false;
  let noResults = false;
  for (const match of text.matchAll(MARKER)) {
    const word = (match[1] ?? '').toLowerCase();
    const ref = match[2]?.toLowerCase();
    if (word === 'fail') {
      if (ref) failRefs.add(ref);
      else failFirst = true;
    } else if (word === 'no-recommend') noRecommend = true;
    else if (word === 'no-results') noResults = true;
  }
  return { failFirst, failRefs: [...failRefs], noRecommend, ...(noResults ? { noResults } : {}) };
}

/** Merge the triggers of two inputs (e.g. a task's creation and a later confirmation). */
export function mergeTriggers(a: Triggers, b: Triggers): Triggers {
  return {
    failFirst: a.failFirst || b.failFirst,
    failRefs: [...new Set([...a.failRefs, ...b.failRefs])],
    noRecommend: a.noRecommend || b.noRecommend,
    ...(a.noResults || b.noResults ? { noResults: true } : {}),
  };
}

/**
 * Whether the step polled by `ref` fails. `firstRef` is the workflow's first polled step, which a
 * bare `[sandbox:fail]` fails.
 */
export function failsAt(triggers: Triggers, ref: string, firstRef: string): boolean {
  return triggers.failRefs.includes(ref) || (triggers.failFirst && ref === firstRef);
}

/** The text without markers. */
export function withoutMarkers(text: string): string {
  return text
    .replace(MARKER, '')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}
