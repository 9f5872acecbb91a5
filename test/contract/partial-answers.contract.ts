/**
 * The PartialAnswerStore contract (shared/engine/partial-answer.ts), run against each backend: the
 * text so far is read back whole, replaced at each publication, and each publication's new part is
 * a change of the feed, in order, after the job's own changes, with its offset.
 */
import { describe, expect, it } from 'vitest';
import type { Change } from '../../shared/engine/change-feed';
import type { PartialAnswer, PartialAnswerStore } from '../../shared/engine/partial-answer';

export interface PartialAnswerWorld {
  store: PartialAnswerStore;
  /** The changes after the start of the world, as the backend's feed answers them (settled). */
  changes(): Promise<Omit<Change, 'seq'>[]>;
  now(): number;
}

/** A partial answer of job J-partial-1 (llm-chat, step ai50), with `overrides`. */
export const answer = (overrides: Partial<PartialAnswer>): PartialAnswer => ({
  jobId: 'J-partial-1',
  tenant: 'acme',
  workflow: 'llm-chat',
  step: 'ai50',
  status: 'RUNNING',
  version: 2,
  text: '',
  offset: 0,
  at: Date.now(),
  ...overrides,
});

export function describePartialAnswerContract(name: string, makeWorld: () => Promise<PartialAnswerWorld>) {
  describe(`${name}: the PartialAnswerStore contract`, () => {
    it('keeps the text so far and logs each new part with its offset, in order', async () => {
      const world = await makeWorld();
      expect(await world.store.read('J-partial-1')).toBeUndefined();
      const at = world.now();
      await world.store.publish(answer({ text: 'Solid-state ', offset: 0, at }));
      await world.store.publish(answer({ text: 'Solid-state separators crack ', offset: 12, at: at + 1 }));
      await world.store.publish(
        answer({ text: 'Solid-state separators crack under pressure.', offset: 29, at: at + 2 }),
      );
      const kept = await world.store.read('J-partial-1');
      expect(kept).toMatchObject({
        jobId: 'J-partial-1',
        tenant: 'acme',
        step: 'ai50',
        text: 'Solid-state separators crack under pressure.',
        offset: 29,
      });
      const parts = (await world.changes()).filter((change) => change.kind === 'answer');
      expect(parts.map((change) => [change.id, change.tenant, change.answer])).toEqual([
        ['J-partial-1', 'acme', { step: 'ai50', offset: 0, text: 'Solid-state ' }],
        ['J-partial-1', 'acme', { step: 'ai50', offset: 12, text: 'separators crack ' }],
        ['J-partial-1', 'acme', { step: 'ai50', offset: 29, text: 'under pressure.' }],
      ]);
      // Joined, the parts are the text so far.
      expect(parts.map((change) => change.answer?.text).join('')).toBe(kept?.text);
    });

    it('starts a new stream of the job at offset 0, replacing the text kept', async () => {
      const world = await makeWorld();
      await world.store.publish(answer({ jobId: 'J-partial-2', text: 'first try', at: world.now() }));
      await world.store.publish(
        answer({ jobId: 'J-partial-2', text: 'again', offset: 0, at: world.now() + 1 }),
      );
      expect((await world.store.read('J-partial-2'))?.text).toBe('again');
      expect(await world.store.read('J-partial-1')).toBeUndefined();
    });
  });
}
