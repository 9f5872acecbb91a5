import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitIntoPieces } from '../../../shared/workflows/translation/pieces';
import { callSequence, lastSeq, startWorld, type World } from './world';

/** A disclosure of about 7,000 characters: 12 paragraphs, each numbered so their order can be checked. */
const paragraphs = Array.from(
  { length: 12 },
  (_, index) =>
    `Paragraph ${index + 1}. ${'The spring-loaded pawl engages the notch of the battery housing while the release lever stays free. '.repeat(6).trimEnd()}`,
);
const text = paragraphs.join('\n\n');

describe('translation pieces', () => {
  it('cut at paragraph ends within the limit, and a paragraph longer than the limit at sentence ends', () => {
    const pieces = splitIntoPieces(text, 2000);
    expect(pieces.length).toBeGreaterThanOrEqual(4);
    for (const piece of pieces) expect(piece.text.length).toBeLessThanOrEqual(2000);
    expect(pieces.map((piece) => piece.text + piece.after).join('')).toBe(text.trim());
    const long = splitIntoPieces(`${'A sentence of the claim. '.repeat(120)}\n\nLast.`, 500);
    for (const piece of long) {
      expect(piece.text.length).toBeLessThanOrEqual(500);
      expect(piece.text.endsWith('.')).toBe(true);
    }
    const unspaced = splitIntoPieces('字'.repeat(4500), 2000);
    expect(unspaced.map((piece) => piece.text.length)).toEqual([2000, 2000, 500]);
  });
});

describe('translation against the sandbox', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world.close());

  it('ai: one ai61 call per piece, in order, joined back paragraph by paragraph; the translation is the answer', async () => {
    const before = lastSeq(world);
    const job = await world.run('translation', { text, target: 'zh', title: 'Battery latch' });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    const pieces = splitIntoPieces(text, 2000);
    const calls = world.sandbox.ledger.entries({ outcome: 'ok' }).filter((entry) => entry.seq > before);
    expect(calls.map((entry) => entry.operationId)).toEqual(pieces.map(() => 'ai61AiTranslation'));
    expect(callSequence(world, before)).toEqual(['ai61']);

    const { markdown, result } = await world.report(job.id);
    const answer = (result as unknown as { answer: string }).answer;
    const translatedParagraphs = answer.split('\n\n');
    expect(translatedParagraphs).toHaveLength(12);
    for (const [index, paragraph] of translatedParagraphs.entries())
      expect(paragraph).toContain(String(index + 1));
    expect(answer).toMatch(/\p{Script=Han}/u);
    const order = ['## Translation', '## Pieces', '## Source text'];
    const at = order.map((title) => markdown.indexOf(`\n${title}\n`));
    expect(at.every((index) => index > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(markdown.split('\n')[0]).toBe('# Translation (detected → zh): Battery latch');
    expect(markdown).toContain(`${pieces.length} pieces of at most 2,000 characters (ai61)`);
    expect(markdown).toContain('source language en (detected)');
    expect(result.summary).toBe(
      `Translated detected → zh: ${answer.length.toLocaleString('en-US')} characters in ${pieces.length} pieces (ai61)`,
    );
  }, 120_000);

  it('hiro: t010 with the source named, into a language ai61 does not take', async () => {
    const before = lastSeq(world);
    const job = await world.run('translation', { text, source: 'en', target: 'de' });
    expect(job.status, JSON.stringify(job.lastError)).toBe('SUCCEEDED');
    expect(callSequence(world, before)).toEqual(['t010HiroTranslationTranslate']);
    const { result } = await world.report(job.id);
    expect(result.summary).toMatch(/^Translated en → de: [\d,]+ characters in 1 piece \(t010\)$/);
  }, 60_000);

  it('refuses a bad input before any call, naming the field', async () => {
    const { workflows } = await import('../../../shared/workflows');
    const schema = workflows.get('translation')!.input;
    for (const [value, message] of [
      [{ text: '' }, 'text: the text to translate is empty'],
      [{ text: 'x', target: 'xx' }, 'target: a language code'],
      [{ text: 'x', target: 'de' }, 'source: the hiro engine needs the source language'],
      [
        { text: 'x', target: 'de', engine: 'ai', source: 'en' },
        'target: the ai engine translates into en, zh, ja only',
      ],
      [{ text: 'x', source: 'en', target: 'en' }, 'target: must differ from source'],
      [{ text: 'x'.repeat(200_001) }, 'text: at most 200,000 characters'],
    ] as const) {
      const parsed = schema.safeParse(value);
      expect(parsed.success, JSON.stringify(value).slice(0, 80)).toBe(false);
      expect(JSON.stringify(parsed.error?.issues)).toContain(message);
    }
  });
});
