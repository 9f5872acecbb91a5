/**
 * What the chaos suites share: the mixed workflows and their inputs, the faults the sandbox
 * injects, and which failures are the engine's choice (see docs/concepts/reliability.md).
 */
import type { Job } from '../../shared/engine/job-record';
import type { FaultRule } from '../../shared/sandbox/fault-rules';

/** A 1x1 PNG: the design workflows' product image, given as data so each job uploads it (p010). */
const productPng =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/**
 * The image as data, named with the job's tag: p010's multipart body carries only the file name
 * (`aws_3.png`), so that is how the paid-call audit finds the upload's job.
 */
const productImage = (i: number, tag: string) => ({ data: productPng, name: `${tag} ${i}.png` });

/** The workflows mixed, and an input for each (every input unique, so a repeated create shows upstream). */
const mix: [workflow: string, input: (i: number, tag: string) => unknown][] = [
  ['patent-count', (i, tag) => ({ query: `TTL:(folding hinge ${tag} ${i})` })],
  [
    'novelty-check',
    (i, tag) => ({
      text: `Variant ${tag} ${i}: a bicycle helmet of six rigid shell segments joined by textile hinges, folding flat.`,
    }),
  ],
  [
    'find-solution',
    (i, tag) => ({ problem: `How can hinge wear be reduced in folding helmet ${tag} ${i}?` }),
  ],
  [
    'fto',
    (i, tag) => ({
      text: `Variant ${tag} ${i}: a folding helmet whose shell segments lock open with a magnetic buckle.`,
      markets: ['US', 'EP'],
      // A patent named for comparison: ai66-8, a paid call, under the same faults.
      comparePatents: ['CN118289111A'],
    }),
  ],
  ['encyclopedia-qa', (i, tag) => ({ question: `What is compound ${tag} ${i} used for in migraine?` })],
  ['llm-chat', (i, tag) => ({ query: `Summarise the state of the art of folding helmets, ${tag} ${i}.` })],
  [
    'technical-qa',
    (i, tag) => ({ question: `How can hinge wear be limited in folding helmet ${tag} ${i}?` }),
  ],
  [
    'translation',
    (i, tag) => ({
      // Every sentence its own, so no two pieces are the same text (the ledger counts a create by its body).
      text: Array.from(
        { length: 40 },
        (_, k) => `Segment ${k + 1} of helmet ${tag} ${i} locks open with a magnetic buckle.`,
      ).join(' '),
      target: 'ja',
    }),
  ],
  [
    'feasibility-analysis',
    (i, tag) => ({
      text: `Variant ${tag} ${i}: a folding helmet whose shell segments lock open with a magnetic buckle.`,
    }),
  ],
  [
    'specification-drafting',
    (i, tag) => ({
      title: `Folding helmet ${tag} ${i}`,
      disclosure: `Variant ${tag} ${i}: a folding helmet whose shell segments lock open with a magnetic buckle.`,
      claims: `1. A folding helmet comprising: shell segments ${tag} ${i}; textile hinges; and a magnetic buckle.\n2. The helmet of claim 1, wherein the buckle locks the segments open.`,
    }),
  ],
  [
    'technical-disclosure',
    (i, tag) => ({
      text: `Variant ${tag} ${i}: a helmet whose segments lock open with a magnetic buckle and fold along textile hinges.`,
    }),
  ],
  [
    'design-infringement-search',
    (i, tag) => ({
      images: [productImage(i, tag)],
      countries: ['US', 'EU'],
      field: `folding helmet ${tag} ${i}`,
    }),
  ],
  ['design-infringement-1v1', (i, tag) => ({ image: productImage(i, tag), patent: 'EU0040356240003S' })],
];

/** Where the image-based workflows start in the mix (a short run may start there to cover them). */
export const imageWorkflowsAt = mix.findIndex(([workflow]) => workflow === 'design-infringement-search');

/** `count` inputs, cycling through the workflows from the `from`-th, each input unique by `tag` and its index. */
export function chaosInputs(count: number, tag: string, from = 0): { workflow: string; input: unknown }[] {
  return Array.from({ length: count }, (_, i) => {
    const [workflow, input] = mix[(from + i) % mix.length]!;
    return { workflow, input: input(i, tag) };
  });
}

/**
 * The faults: the first rule that fires decides the answer, so each probability is conditional on
 * the ones before not firing, giving 20% 5xx, 5% throttling, 2% resets (half before the work, half
 * after it) and 1% malformed answers overall, on every kind of call (an unreadable answer to a read
 * is read again; to a create, the engine does not send it again).
 */
export function chaosFaultRules(): FaultRule[] {
  return [
    { kind: 'http-5xx', probability: 0.2 },
    { kind: 'throttle-429', probability: 0.05 / 0.8, retryAfterSeconds: 0 },
    { kind: 'reset', when: 'before', probability: 0.01 / 0.75 },
    { kind: 'reset', when: 'after', probability: 0.01 / 0.7425 },
    { kind: 'malformed', probability: 0.01 / 0.735 },
  ];
}

/**
 * A job that failed because a transient fault (5xx, reset before the work) outlasted the step's
 * attempts: nothing is lost, `opflow retry` runs it again from its step. The suites retry these once
 * and then require them to succeed; how many there were is one of the figures.
 */
export function failedTransiently(job: Job): boolean {
  return job.status === 'FAILED' && job.lastError?.retryable === true;
}

/**
 * A failure the engine chose rather than risk paying twice: the answer to a create was lost (a
 * reset after the work) or unreadable, so the engine does not send it again. Any other failure
 * (a retryable fault that outlasted the attempts, an internal error) fails the suite.
 */
export function failedOnPurpose(job: Job): boolean {
  const error = job.lastError;
  return error !== undefined && !error.retryable && (error.kind === 'protocol' || error.kind === 'network');
}
